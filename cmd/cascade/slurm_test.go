package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/slurm"
)

// TestServeSlurmConfig: the executor and the Slurm job options come from
// CASCADE_* variables, flags winning; bad values name their flag and
// variable.
func TestServeSlurmConfig(t *testing.T) {
	t.Setenv("CASCADE_EXECUTOR", "slurm")
	t.Setenv("CASCADE_SLURM_MEM", "4G")
	t.Setenv("CASCADE_SLURM_PARTITION", "from-env")
	t.Setenv("CASCADE_SLURM_POLL_INTERVAL", "30s")
	cfg, _, _, err := parseServe([]string{"--slurm-partition", "gpu", "--slurm-time", "1:30:00", "--slurm-cpus", "2", "--slurm-qos", "high", "--slurm-account", "arch"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := slurm.Options{Partition: "gpu", Account: "arch", QOS: "high", TimeLimit: 90 * time.Minute, MemoryMB: 4096, CPUs: 2}
	if cfg.Executor != "slurm" || cfg.Slurm.Options != want || cfg.Slurm.PollInterval != 30*time.Second || cfg.Slurm.Accounting != slurm.AccountingAuto {
		t.Fatalf("executor %q, slurm %+v", cfg.Executor, cfg.Slurm)
	}
	for args, msg := range map[string]string{
		"--executor k8s":           `--executor (CASCADE_EXECUTOR): want local or slurm, got "k8s"`,
		"--slurm-mem lots":         "--slurm-mem (CASCADE_SLURM_MEM): mem=lots: want megabytes",
		"--slurm-time soon":        "--slurm-time (CASCADE_SLURM_TIME): time=soon: want minutes",
		"--slurm-accounting yes":   `--slurm-accounting (CASCADE_SLURM_ACCOUNTING): want auto, on or off, got "yes"`,
		"--slurm-poll-interval 0s": "--slurm-poll-interval and --slurm-timeout: want durations above 0",
	} {
		_, _, _, err := parseServe(strings.Fields(args), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", args, err, msg)
		}
	}
}
