package slurm

import (
	"fmt"
	"time"
)

// Config is Cascade's Slurm settings, one value from the serve command's
// flags and CASCADE_SLURM_* variables, through the server's
// configuration, to the Slurm executor (package runs/slurmexec), which
// hands it to its [Client]. It holds what the commands need (Bin, Env,
// Timeout, Accounting: the Client reads these), how the executor submits
// and polls (Submitters, PollInterval), and every job's sbatch options.
type Config struct {
	// Bin is the directory holding the commands ("/opt/slurm/bin"); PATH's
	// when empty.
	Bin string
	// Env is added to the commands' environment, e.g. "SLURM_CONF=…" for
	// another cluster.
	Env []string
	// Timeout bounds each command; DefaultTimeout when 0.
	Timeout time.Duration
	// Accounting says whether [Client.Poll] asks sacct about jobs squeue
	// has forgotten.
	Accounting Accounting

	// PollInterval is how often the executor polls every unfinished job,
	// with one squeue call; DefaultPollInterval when 0.
	PollInterval time.Duration
	// Submitters is how many sbatch calls the executor runs at once;
	// DefaultSubmitters when 0.
	Submitters int

	// Options are every job's options; a config folder's
	// cascade-slurm.conf overrides them (see [ReadOptions]).
	Options Options
}

// DefaultPollInterval is how often the executor polls when
// Config.PollInterval is 0: 6 squeue calls a minute, however many jobs.
const DefaultPollInterval = 10 * time.Second

// DefaultSubmitters is how many sbatch calls run at once when
// Config.Submitters is 0.
const DefaultSubmitters = 4

// ParseAccounting reads an Accounting setting as CASCADE_SLURM_ACCOUNTING
// takes it: "auto" (or ""), "on" or "off".
func ParseAccounting(s string) (Accounting, error) {
	switch s {
	case "", "auto":
		return AccountingAuto, nil
	case "on":
		return AccountingOn, nil
	case "off":
		return AccountingOff, nil
	}
	return AccountingAuto, fmt.Errorf("want auto, on or off, got %q", s)
}

// String returns the setting as ParseAccounting reads it.
func (a Accounting) String() string {
	switch a {
	case AccountingOn:
		return "on"
	case AccountingOff:
		return "off"
	}
	return "auto"
}
