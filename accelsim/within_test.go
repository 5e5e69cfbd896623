package accelsim_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/accelsim"
	"github.com/cascade-sim/cascade/accelsim/accelsimtest"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// TestFindOneLevelTooDeep: a checkout's gpu-simulator/ folder (or a
// folder below it) given for the checkout said only "no simulator at
// gpu-simulator/bin/release/accel-sim.out: build it"; it names the
// folder that looks like the checkout. The real checkout, when the tests
// have it, too.
func TestFindOneLevelTooDeep(t *testing.T) {
	check := func(t *testing.T, checkout string) {
		for _, deep := range []string{"gpu-simulator", "gpu-simulator/bin"} {
			c, err := accelsim.Find(filepath.Join(checkout, deep))
			if err != nil {
				t.Fatal(err)
			}
			want := "missing: no simulator at gpu-simulator/bin/release/accel-sim.out, and no checkout here: " + checkout + " looks like the checkout (it holds gpu-simulator/); give that folder"
			if report := strings.Join(c.Report(), "\n"); c.Above != checkout || !strings.Contains(report, want) {
				t.Errorf("%s: Above %q, report:\n%s\nwant %q", deep, c.Above, report, want)
			}
		}
		if c, err := accelsim.Find(checkout); err != nil || c.Above != "" {
			t.Errorf("the checkout itself: Above %q, %v", c.Above, err)
		}
	}
	check(t, accelsimtest.Write(t, t.TempDir(), fakesim.Version2))
	t.Run("real", func(t *testing.T) { check(t, testkit.RealAccelSim(t)) })
}
