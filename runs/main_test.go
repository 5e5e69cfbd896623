package runs_test

import (
	"flag"
	"os"
	"testing"
)

// quickstartID is the quickstart trace's id in the Manager's tests, as
// testkit/quickstart gives it in servertests/runs' (which would link the
// server into this package's tests).
const quickstartID = "qs"

// TestMain runs up to 4 tests at a time where -test.parallel does not say
// (go test's default is GOMAXPROCS, 2 in CI): this package's tests mostly
// wait, on the stand-in simulator. Its tests that start a server, and
// Slurm's, are in servertests/runs.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", "4")
	}
	os.Exit(m.Run())
}
