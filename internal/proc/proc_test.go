package proc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/internal/proc"
	"github.com/cascade-sim/cascade/testkit"
)

// sh is a command running script with /bin/sh, logging to a file in dir.
func sh(dir, script string) proc.Cmd {
	return proc.Cmd{Args: []string{"/bin/sh", "-c", script}, Dir: dir, Log: filepath.Join(dir, "out.log")}
}

func readLog(t *testing.T, c proc.Cmd) string {
	t.Helper()
	b, err := os.ReadFile(c.Log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type outcome struct {
	res proc.Result
	err error
}

// start runs c in the background and returns once its log holds a line
// "ready": the script has set up what the test is about to poke. Each
// nudge of Cmd.Grew is the event it waits on.
func start(t *testing.T, ctx context.Context, c proc.Cmd) <-chan outcome {
	t.Helper()
	grew := make(chan struct{}, 1)
	c.Grew = func() {
		select {
		case grew <- struct{}{}:
		default:
		}
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := proc.Run(ctx, c)
		done <- outcome{res, err}
	}()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case <-grew:
			if b, _ := os.ReadFile(c.Log); bytes.Contains(b, []byte("ready\n")) {
				return done
			}
		case o := <-done:
			t.Fatalf("ended before it was ready: %v, %v; log:\n%s", o.res, o.err, readLog(t, c))
		case <-timeout:
			t.Fatalf("not ready within 30s; log:\n%s", readLog(t, c))
		}
	}
}

func wait(t *testing.T, done <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(30 * time.Second):
		t.Fatal("Run has not returned within 30s")
		return outcome{}
	}
}

// readPID reads the process id a script wrote to file.
func readPID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return pid
}

// gone reports whether the process has ended: it no longer exists, or is
// a zombie its new parent has yet to reap.
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

func assertGone(t *testing.T, pid int) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, fmt.Sprintf("process %d still alive", pid), func() bool { return gone(pid) })
}

func TestRunExitStatus(t *testing.T) {
	testkit.SkipShort(t, "runs /bin/sh")
	tests := []struct {
		name, script string
		want         proc.Result
		str          string
	}{
		{"success", "exit 0", proc.Result{ExitCode: 0}, "exit 0"},
		{"failure", "exit 3", proc.Result{ExitCode: 3}, "exit 3"},
		{"last command's status", "false", proc.Result{ExitCode: 1}, "exit 1"},
		{"killed by a signal", "kill -KILL $$", proc.Result{ExitCode: -1, Signal: "killed"}, "killed by signal: killed"},
		{"segfault", "kill -SEGV $$", proc.Result{ExitCode: -1, Signal: "segmentation fault"}, "killed by signal: segmentation fault"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := proc.Run(context.Background(), sh(t.TempDir(), tt.script))
			if err != nil || res.ExitCode != tt.want.ExitCode || res.Signal != tt.want.Signal || res.String() != tt.str {
				t.Fatalf("Run = %+v (%q), %v; want %+v (%q)", res, res, err, tt.want, tt.str)
			}
		})
	}
}

func TestRunLog(t *testing.T) {
	testkit.SkipShort(t, "runs /bin/sh")
	dir := t.TempDir()
	c := sh(dir, `echo "out $GREETING"; echo err >&2; pwd; printf 'no newline'`)
	c.Env = []string{"GREETING=hello"}
	if err := os.WriteFile(c.Log, []byte("an older run's log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var grew atomic.Int32
	c.Grew = func() { grew.Add(1) }
	res, err := proc.Run(context.Background(), c)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %v, %v", res, err)
	}
	want := "out hello\nerr\n" + dir + "\nno newline"
	if got := readLog(t, c); got != want {
		t.Fatalf("log %q, want %q", got, want)
	}
	// The last nudge comes before Run returns, so a follower reads all.
	if grew.Load() == 0 {
		t.Fatal("Grew never called")
	}
}

func TestRunCannotStart(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		notFound bool
	}{
		{"missing program", []string{filepath.Join(dir, "no-such-program")}, true},
		{"missing from PATH", []string{"cascade-no-such-program-on-path"}, true},
		{"not executable", []string{notExec}, true},
		{"no program", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := proc.Cmd{Args: tt.args, Dir: dir, Log: filepath.Join(t.TempDir(), "out.log")}
			_, err := proc.Run(context.Background(), c)
			if err == nil || errors.Is(err, proc.ErrNotFound) != tt.notFound {
				t.Fatalf("err %v; want ErrNotFound %v", err, tt.notFound)
			}
			if tt.notFound {
				if log := readLog(t, c); !strings.Contains(log, "cascade: cannot start "+tt.args[0]) {
					t.Fatalf("log %q", log)
				}
			}
		})
	}
	t.Run("log in a missing directory", func(t *testing.T) {
		c := sh(filepath.Join(dir, "missing"), "exit 0")
		if _, err := proc.Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "create log") {
			t.Fatalf("err %v", err)
		}
	})
}

// TestCancelStopsGroup cancels a script whose background child holds on:
// SIGTERM reaches the whole process group, the child included, not just
// the program Run started (which here waits for its child to finish).
func TestCancelStopsGroup(t *testing.T) {
	testkit.SkipShort(t, "runs /bin/sh")
	dir := t.TempDir()
	c := sh(dir, `trap 'wait; echo parent done; exit 0' TERM
sh -c 'trap "echo child got TERM; exit 0" TERM; echo $$ > child.pid; echo ready; sleep 1000 & wait' &
wait`)
	c.Grace = 20 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := start(t, ctx, c)
	child := readPID(t, filepath.Join(dir, "child.pid"))
	cancel()
	o := wait(t, done)
	if !errors.Is(o.err, context.Canceled) || o.res.ExitCode != 0 || o.res.Signal != "" {
		t.Fatalf("Run = %v, %v; want exit 0, context.Canceled; log:\n%s", o.res, o.err, readLog(t, c))
	}
	if log := readLog(t, c); !strings.HasSuffix(log, "child got TERM\nparent done\n") {
		t.Fatalf("log:\n%s", log)
	}
	assertGone(t, child)
}

// TestCancelEscalatesToKill cancels a script that outlives SIGTERM: after
// the grace period the group gets SIGKILL, and the log shows SIGTERM came
// first.
func TestCancelEscalatesToKill(t *testing.T) {
	testkit.SkipShort(t, "runs /bin/sh")
	dir := t.TempDir()
	c := sh(dir, `trap 'echo got TERM' TERM
sleep 1000 & echo $! > child.pid
echo ready
while :; do sleep 1000 & wait $!; done`)
	c.Grace = 2 * time.Second // ample time for the trap to run on a busy machine
	ctx, cancel := context.WithCancel(context.Background())
	done := start(t, ctx, c)
	child := readPID(t, filepath.Join(dir, "child.pid"))
	cancel()
	o := wait(t, done)
	if !errors.Is(o.err, context.Canceled) || o.res.Signal != "killed" || o.res.ExitCode != -1 {
		t.Fatalf("Run = %+v, %v; want killed, context.Canceled", o.res, o.err)
	}
	if log := readLog(t, c); !strings.Contains(log, "got TERM") {
		t.Fatalf("no SIGTERM before SIGKILL; log:\n%s", log)
	}
	assertGone(t, child)
}

// TestCancelWithinGrace: a program that exits on SIGTERM is not killed,
// and its exit status is kept.
func TestCancelWithinGrace(t *testing.T) {
	testkit.SkipShort(t, "runs /bin/sh")
	dir := t.TempDir()
	c := sh(dir, `trap 'echo cleaning up; exit 7' TERM
echo ready
sleep 1000 & wait`)
	c.Grace = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := start(t, ctx, c)
	cancel()
	o := wait(t, done)
	if !errors.Is(o.err, context.Canceled) || o.res.ExitCode != 7 || o.res.Signal != "" {
		t.Fatalf("Run = %+v, %v; want exit 7, context.Canceled", o.res, o.err)
	}
	if log := readLog(t, c); !strings.HasSuffix(log, "cleaning up\n") {
		t.Fatalf("log:\n%s", log)
	}
}

// TestExitTakesGroupAlong: a program that exits leaving background
// children behind ends its run; the children are killed with its group,
// also the ones that hold its output open.
func TestExitTakesGroupAlong(t *testing.T) {
	testkit.SkipShort(t, "runs /bin/sh")
	for _, tt := range []struct {
		name, redirect string
		exit           int
	}{
		{"children detached from the log", " >/dev/null 2>&1", 4},
		{"children holding the log open", "", 4},
		{"children holding the log open, success", "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			c := sh(dir, `sleep 1000`+tt.redirect+` & echo $! > child.pid; echo done; exit `+strconv.Itoa(tt.exit))
			done := make(chan outcome, 1)
			go func() {
				res, err := proc.Run(context.Background(), c)
				done <- outcome{res, err}
			}()
			o := wait(t, done)
			if o.err != nil || o.res.ExitCode != tt.exit {
				t.Fatalf("Run = %v, %v", o.res, o.err)
			}
			assertGone(t, readPID(t, filepath.Join(dir, "child.pid")))
			if log := readLog(t, c); log != "done\n" {
				t.Fatalf("log %q", log)
			}
		})
	}
}

// TestLogOnFullDisk: output that no longer fits on the log's disk is
// dropped without the program noticing (it is neither blocked nor killed
// by SIGPIPE) and Run says so with a *LogError; with StopOnLogError the
// program is stopped at the first write that failed.
func TestLogOnFullDisk(t *testing.T) {
	testkit.SkipShort(t, "runs /bin/sh")
	root := t.TempDir()
	dir := filepath.Join(root, "small")
	testkit.SmallDisk(t, dir, "1m")
	// 4 MiB of output, then a file (elsewhere) the test looks for: the
	// program went on.
	ranOn := filepath.Join(root, "ran-on")
	c := sh(dir, `yes 'a line of output' | head -c 4194304; echo ok >`+ranOn)
	res, err := proc.Run(context.Background(), c)
	var le *proc.LogError
	if !errors.As(err, &le) || !errors.Is(err, syscall.ENOSPC) || le.Path != c.Log || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v; want exit 0 and a LogError with ENOSPC for %s", res, err, c.Log)
	}
	if want := "write log " + c.Log + ": no space left on device"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if _, err := os.Stat(ranOn); err != nil {
		t.Errorf("the program did not run on after its log filled the disk: %v", err)
	}

	c = sh(dir, `trap 'echo stopped >&2; exit 143' TERM; while :; do echo a line of output; done`)
	c.StopOnLogError = true
	done := make(chan outcome, 1)
	go func() {
		res, err := proc.Run(context.Background(), c)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if !errors.As(o.err, &le) || !errors.Is(o.err, syscall.ENOSPC) || o.res.ExitCode == 0 {
			t.Fatalf("Run = %+v, %v; want the program stopped and a LogError", o.res, o.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a program writing forever was not stopped when its log filled the disk")
	}
}

// serverEnv makes the test binary a stand-in server (see TestMain): it
// runs one child through proc.Run in the directory the variable names,
// and waits for it.
const serverEnv = "CASCADE_PROC_TEST_SERVER"

func TestMain(m *testing.M) {
	if mb, err := strconv.Atoi(os.Getenv(allocEnv)); err == nil {
		b := make([]byte, mb<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println(len(b))
		os.Exit(0)
	}
	if dir := os.Getenv(serverEnv); dir != "" {
		c := sh(dir, `echo $$ > child.tmp && mv child.tmp child.pid && exec sleep 1000`)
		if tag := os.Getenv(tagEnv); tag != "" {
			// A grandchild, beyond Pdeathsig's reach, first.
			c = sh(dir, `sleep 1000 >/dev/null 2>&1 & echo $! > grand.tmp && mv grand.tmp grand.pid && echo $$ > child.tmp && mv child.tmp child.pid && exec sleep 1000`)
			c.Tag = tag
		}
		proc.Run(context.Background(), c)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// allocEnv, set to a number of MiB, makes the test binary a child that
// takes and touches that much memory, then exits.
const allocEnv = "PROC_TEST_ALLOC_MB"

// TestRunPeakRSSAndWall: Result has the child's own peak resident set,
// from its rusage, and its wall time; Started is told the child's pid.
func TestRunPeakRSSAndWall(t *testing.T) {
	testkit.SkipShort(t, "runs the test binary as a child")
	dir := t.TempDir()
	const mb = 64
	started := 0
	res, err := proc.Run(context.Background(), proc.Cmd{Args: []string{os.Args[0], "-test.run=^$"}, Dir: dir,
		Env: []string{fmt.Sprint(allocEnv, "=", mb)}, Log: filepath.Join(dir, "out.log"),
		Started: func(pid int) { started = pid }})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if started <= 0 || started == os.Getpid() {
		t.Errorf("Started was called with %d, want the child's pid", started)
	}
	if res.PeakRSS < mb<<20 {
		t.Errorf("PeakRSS = %d, want at least %d", res.PeakRSS, mb<<20)
	}
	if res.PeakRSS > 4*mb<<20 {
		t.Errorf("PeakRSS = %d: more than 4 times what the child took; KiB read as bytes?", res.PeakRSS)
	}
	if res.Wall <= 0 {
		t.Errorf("Wall = %v, want > 0", res.Wall)
	}
}

// TestChildDiesWithTheServer: a server killed with SIGKILL, which runs no
// clean-up of its own, takes its child along (the parent-death signal), so
// no post-processor or simulator outlives it.
func TestChildDiesWithTheServer(t *testing.T) {
	testkit.SkipShort(t, "runs the test binary and /bin/sh")
	dir := t.TempDir()
	server := exec.Command(os.Args[0], "-test.run=^$")
	server.Env = append(os.Environ(), serverEnv+"="+dir)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "child.pid")
	testkit.Eventually(t, 10*time.Second, "the child started", func() bool { _, err := os.Stat(pidFile); return err == nil })
	child := readPID(t, pidFile)
	if gone(child) {
		t.Fatalf("child %d is not running", child)
	}
	server.Process.Kill()
	server.Wait()
	assertGone(t, child)
}

// tagEnv, with serverEnv, makes the test binary's child leave a
// grandchild and run under that Tag.
const tagEnv = "CASCADE_PROC_TEST_TAG"

// TestKillTaggedAfterTheServer: a server killed outright takes its child
// along (Pdeathsig) but not the grandchild the child started (QA: a
// post-processor script's children ran on beside the one the restarted
// server started); KillTagged finds it by its Tag and kills it, and
// nothing of another tag.
func TestKillTaggedAfterTheServer(t *testing.T) {
	testkit.SkipShort(t, "runs the test binary and /bin/sh")
	dir := t.TempDir()
	tag := "postprocess " + dir + " trace-1"
	server := exec.Command(os.Args[0], "-test.run=^$")
	server.Env = append(os.Environ(), serverEnv+"="+dir, tagEnv+"="+tag)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "child.pid")
	testkit.Eventually(t, 10*time.Second, "the child started", func() bool { _, err := os.Stat(pidFile); return err == nil })
	child, grand := readPID(t, pidFile), readPID(t, filepath.Join(dir, "grand.pid"))
	server.Process.Kill()
	server.Wait()
	assertGone(t, child)
	time.Sleep(200 * time.Millisecond)
	if gone(grand) {
		t.Fatalf("grandchild %d ended with the server: nothing to test", grand)
	}
	if n := proc.KillTagged(tag + "-other"); n != 0 || gone(grand) {
		t.Fatalf("another tag killed %d", n)
	}
	if n := proc.KillTagged(tag); n != 1 {
		t.Errorf("KillTagged killed %d, want 1", n)
	}
	assertGone(t, grand)
}
