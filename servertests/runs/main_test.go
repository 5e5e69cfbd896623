package runs_test

import (
	"flag"
	"testing"

	"github.com/cascade-sim/cascade/testkit/slurmtest"
)

// TestMain runs up to 4 tests at a time where -test.parallel does not say
// (go test's default is GOMAXPROCS, 2 in CI): this package's tests mostly
// wait, on the stand-in simulator, on Slurm's jobs and on polls, and its
// parallel tests took 450 s of the race step at 2 (when they were runs/'s).
// It stops the Slurm cluster at the end.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", "4")
	}
	slurmtest.Main(m)
}
