package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/slurm"
)

// slurmOptions are the job options settable globally, by sbatch's name,
// with their variable and flag names.
var slurmOptions = []struct{ option, env, flag, help string }{
	{"partition", "CASCADE_SLURM_PARTITION", "slurm-partition", "Slurm partition of every run's job; the cluster's default when empty"},
	{"account", "CASCADE_SLURM_ACCOUNT", "slurm-account", "Slurm account jobs are charged to"},
	{"qos", "CASCADE_SLURM_QOS", "slurm-qos", "Slurm QOS of the jobs"},
	{"time", "CASCADE_SLURM_TIME", "slurm-time", "time limit of a job: minutes, [D-]HH:MM:SS or 90m"},
	{"mem", "CASCADE_SLURM_MEM", "slurm-mem", "memory of a job: megabytes, or 512M, 4G"},
	{"cpus-per-task", "CASCADE_SLURM_CPUS", "slurm-cpus", "CPUs of a job"},
}

// defineExecutorFlags defines serve's executor settings on fs:
// CASCADE_EXECUTOR and the Slurm executor's CASCADE_SLURM_* variables,
// each also a flag, which fill cfg.Executor and cfg.Slurm. The returned
// apply, called once the flags are parsed, checks them and reads those
// given as text into cfg.Slurm.
func defineExecutorFlags(fs *flag.FlagSet, cfg *app.Config) (apply func() error) {
	fs.StringVar(&cfg.Executor, "executor", env("CASCADE_EXECUTOR", "local"), "where runs execute: local (this machine) or slurm (a batch job each; see docs/slurm.md) (CASCADE_EXECUTOR)")
	fs.StringVar(&cfg.Slurm.Bin, "slurm-bin", env("CASCADE_SLURM_BIN", ""), "directory of Slurm's commands (sbatch, squeue, ...); PATH when empty (CASCADE_SLURM_BIN)")
	fs.DurationVar(&cfg.Slurm.PollInterval, "slurm-poll-interval", envDuration("CASCADE_SLURM_POLL_INTERVAL", slurm.DefaultPollInterval), "how often every job is polled, with one squeue call (CASCADE_SLURM_POLL_INTERVAL)")
	fs.DurationVar(&cfg.Slurm.Timeout, "slurm-timeout", envDuration("CASCADE_SLURM_TIMEOUT", 30*time.Second), "time a Slurm command may take before Slurm counts as unavailable (CASCADE_SLURM_TIMEOUT)")
	accounting := fs.String("slurm-accounting", env("CASCADE_SLURM_ACCOUNTING", "auto"), "auto, on or off: whether sacct is asked about jobs squeue has forgotten; auto asks the cluster (CASCADE_SLURM_ACCOUNTING)")
	options := map[string]*string{} // sbatch option name -> value
	for _, o := range slurmOptions {
		options[o.option] = fs.String(o.flag, env(o.env, ""), fmt.Sprintf("%s (%s)", o.help, o.env))
	}
	return func() error {
		switch cfg.Executor {
		case "local", "slurm":
		default:
			return fmt.Errorf("--executor (CASCADE_EXECUTOR): want local or slurm, got %q", cfg.Executor)
		}
		a, err := slurm.ParseAccounting(*accounting)
		if err != nil {
			return fmt.Errorf("--slurm-accounting (CASCADE_SLURM_ACCOUNTING): %w", err)
		}
		cfg.Slurm.Accounting = a
		if cfg.Slurm.PollInterval <= 0 || cfg.Slurm.Timeout <= 0 {
			return fmt.Errorf("--slurm-poll-interval and --slurm-timeout: want durations above 0, got %v and %v", cfg.Slurm.PollInterval, cfg.Slurm.Timeout)
		}
		for _, o := range slurmOptions {
			v := *options[o.option]
			if v == "" {
				continue
			}
			if err := cfg.Slurm.Options.Set(o.option, v); err != nil {
				return fmt.Errorf("--%s (%s): %w", o.flag, o.env, err)
			}
		}
		return nil
	}
}
