// Package slurmtest gives tests a real single-node Slurm cluster: started
// once per test process by scripts/slurm.sh (which installs Debian's
// packages when missing) the first time a test asks for it, and stopped by
// the package's TestMain through [Main]. Where the packages cannot be
// installed, tests that need the cluster are skipped, saying so on stderr
// and in their skip message; a cluster that does not start fails them.
package slurmtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
)

// exitCannotInstall is scripts/slurm.sh's exit status when the packages
// are missing and cannot be installed.
const exitCannotInstall = 3

// Cluster is the test cluster.
type Cluster struct {
	// Dir holds its configuration, state and logs.
	Dir string
	// Env is what "slurm.sh up" printed: SLURM_CONF and CASCADE_SLURM_*.
	Env map[string]string

	mu      sync.Mutex
	stopped bool // the controller is stopped
}

var cluster struct {
	once    sync.Once
	c       *Cluster
	skip    string // why the cluster tests skip
	err     error  // why the cluster did not start
	started bool
}

// Main runs a package's tests and stops the cluster if one started; call
// it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if cluster.started {
		out, err := exec.Command(Script(), "down", cluster.c.Dir).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "slurm.sh down: %v\n%s", err, out)
			code = 1
		}
		os.RemoveAll(cluster.c.Dir)
	}
	os.Exit(code)
}

// Script is scripts/slurm.sh.
func Script() string { return filepath.Join(testkit.ModuleRoot(), "scripts", "slurm.sh") }

// Start starts the cluster once; every test that needs it calls it.
// CASCADE_TEST_SLURM_FLAGS ("--no-accounting --no-cgroups") is passed to
// slurm.sh up, to test the fallbacks.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	cluster.once.Do(func() {
		if testing.Short() {
			cluster.skip = "full suite: starts a Slurm cluster" // as testkit.SkipShort says it
			return
		}
		dir, err := os.MkdirTemp("", "cascade-slurm-")
		if err != nil {
			cluster.err = err
			return
		}
		cluster.c = &Cluster{Dir: dir}
		args := append([]string{"up", dir}, strings.Fields(os.Getenv("CASCADE_TEST_SLURM_FLAGS"))...)
		cmd := exec.Command(Script(), args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == exitCannotInstall:
			cluster.skip = "SKIPPED: Slurm cannot be installed on this machine: " + strings.TrimSpace(stderr.String())
			fmt.Fprintln(os.Stderr, "slurm tests: "+cluster.skip)
			os.RemoveAll(dir)
			return
		case err != nil:
			cluster.started = true // stop whatever did start
			cluster.err = fmt.Errorf("scripts/slurm.sh up: %v\n%s", err, stderr.String())
			return
		}
		cluster.started = true
		cluster.c.Env = map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "="); ok {
				cluster.c.Env[k] = v
			}
		}
	})
	if cluster.skip != "" {
		tb.Skip(cluster.skip)
	}
	if cluster.err != nil {
		tb.Fatal(cluster.err)
	}
	return cluster.c
}

// Conf is the cluster's SLURM_CONF.
func (c *Cluster) Conf() string { return c.Env["SLURM_CONF"] }

// Node is the cluster's one node.
func (c *Cluster) Node() string { return c.Env["CASCADE_SLURM_NODE"] }

// Accounting says whether the cluster keeps accounting (sacct works).
func (c *Cluster) Accounting() bool { return c.Env["CASCADE_SLURM_ACCOUNTING"] == "yes" }

// MemoryByCgroup says whether jobs over their memory end OUT_OF_MEMORY
// (cgroups); otherwise Slurm's RSS sampler kills them with signal 9.
func (c *Cluster) MemoryByCgroup() bool { return c.Env["CASCADE_SLURM_MEMORY"] == "cgroup" }

// StopController stops slurmctld alone; jobs keep running. The test
// starts it again with StartController, or its cleanup does.
func (c *Cluster) StopController(tb testing.TB) {
	tb.Helper()
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	tb.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.stopped {
			exec.Command(Script(), "start-ctld", c.Dir).Run()
			c.stopped = false
		}
	})
	if out, err := exec.Command(Script(), "stop-ctld", c.Dir).CombinedOutput(); err != nil {
		tb.Fatalf("stop-ctld: %v\n%s", err, out)
	}
}

// StartController starts slurmctld again from its saved state.
func (c *Cluster) StartController(tb testing.TB) {
	tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if out, err := exec.Command(Script(), "start-ctld", c.Dir).CombinedOutput(); err != nil {
		tb.Fatalf("start-ctld: %v\n%s", err, out)
	}
	c.stopped = false
}

// Command runs one of Slurm's commands against the cluster and returns
// its stdout.
func (c *Cluster) Command(tb testing.TB, name string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf())
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if exit, ok := err.(*exec.ExitError); ok {
			stderr = exit.Stderr
		}
		tb.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// Try runs one of Slurm's commands against the cluster and returns its
// stdout, or its error with the last line of its stderr.
func (c *Cluster) Try(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Calls counts the Slurm commands run through the wrappers in Dir.
type Calls struct {
	Dir  string // holds sbatch, squeue, sacct, scancel and scontrol wrappers
	file string
}

// CountingBin writes a wrapper for each of Slurm's client commands into a
// new directory: each appends its name and arguments to a file and runs
// the real one.
// Give Dir as a client's command directory to count its calls.
func CountingBin(tb testing.TB) *Calls {
	tb.Helper()
	bin := tb.TempDir()
	cs := &Calls{Dir: bin, file: filepath.Join(bin, "calls")}
	for _, name := range []string{"sbatch", "squeue", "sacct", "scancel", "scontrol"} {
		real, err := exec.LookPath(name)
		if err != nil {
			tb.Fatal(err)
		}
		wrapper := fmt.Sprintf("#!/bin/sh\necho %s \"$*\" >>'%s'\nexec %s \"$@\"\n", name, cs.file, real)
		if err := os.WriteFile(filepath.Join(bin, name), []byte(wrapper), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return cs
}

// Count is how many times the named command ran.
func (cs *Calls) Count(name string) int {
	data, err := os.ReadFile(cs.file)
	if err != nil {
		return 0
	}
	n := 0
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			n++
		}
	}
	return n
}

// Args returns the arguments of each call of the named command, in
// order, as one line each (joined by blanks).
func (cs *Calls) Args(name string) []string {
	data, _ := os.ReadFile(cs.file)
	var calls []string
	for line := range strings.Lines(string(data)) {
		if cmd, args, _ := strings.Cut(strings.TrimSpace(line), " "); cmd == name {
			calls = append(calls, args)
		}
	}
	return calls
}
