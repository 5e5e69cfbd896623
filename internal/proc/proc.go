package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultGrace is how long a process group gets between SIGTERM and SIGKILL.
const DefaultGrace = 5 * time.Second

// orphanOutputWait is how long, after a program exited, its output is
// still read while children it left behind hold the log's pipe open; then
// the pipe is closed and the group killed. Without it a run would last as
// long as any background child of its program.
const orphanOutputWait = time.Second

// Cmd describes one child process.
type Cmd struct {
	Args []string // program and arguments
	Dir  string
	Env  []string // added to the server's environment
	Log  string   // file that receives stdout and stderr; truncated first
	// Grew, if set, is called (at most every 100 ms) after output was
	// written to Log.
	Grew  func()
	Grace time.Duration
	// StopOnLogError stops the process group, as a cancel does, once its
	// output cannot be written to Log (the disk is full): for a program
	// whose log is its result. Otherwise what cannot be written is lost and
	// the program runs on. Either way Run returns a *LogError.
	StopOnLogError bool
	// Started, if set, is called with the process's id once it has
	// started, before Run waits for it.
	Started func(pid int)
	// Tag, when set, goes into the program's environment (TagVar), which
	// everything it starts inherits: KillTagged then finds what a server
	// killed outright left running, beyond the reach of Pdeathsig, which
	// kills the program alone.
	Tag string
}

// TagVar is the environment variable that carries a Cmd's Tag.
const TagVar = "CASCADE_PROC_TAG"

// LogError is returned by [Run], with the program's result, when some of
// its output could not be written to its log file. The program never sees
// the failure: its output keeps being read (a reader that stopped would
// kill it with SIGPIPE, or block it on a full pipe).
type LogError struct {
	Path string // the log file
	Err  error  // the first write's error, "no space left on device"
}

// Error reads "write log /data/work/runs/r1/accel-sim.log: no space left
// on device".
func (e *LogError) Error() string { return fmt.Sprintf("write log %s: %v", e.Path, e.Err) }

// Unwrap returns the write's error: errors.Is(err, syscall.ENOSPC) holds
// for a full disk.
func (e *LogError) Unwrap() error { return e.Err }

// Result is how a process ended.
type Result struct {
	ExitCode int    // -1 when killed by a signal
	Signal   string // the signal's name, when killed by one
	// Wall is how long the process ran, from its start to its exit; 0
	// when it never started.
	Wall time.Duration
	// PeakRSS is the process's peak resident set in bytes, from its
	// rusage (the largest of its own and its waited-for children's); 0
	// when the system does not say.
	PeakRSS int64
	// OOMKilled is set when the process died of a SIGKILL that Run did
	// not send and the kernel's OOM killer killed a process of the
	// memory cgroup meanwhile (see oomKills). OOMUnknown is set instead
	// when the cgroup's OOM kill count could not be read to tell.
	OOMKilled, OOMUnknown bool
}

// String reads as "exit 2" or "killed by signal: killed".
func (r Result) String() string {
	if r.Signal != "" {
		return "killed by signal: " + r.Signal
	}
	return fmt.Sprintf("exit %d", r.ExitCode)
}

// ErrNotFound wraps the error of a program that cannot be started because
// it does not exist or is not executable.
var ErrNotFound = errors.New("program not found")

// Run starts c and waits for it. When ctx is done the whole process group
// gets SIGTERM, then SIGKILL after the grace period, and Run returns ctx's
// error with the result; a ctx done already starts nothing. An error
// starting the process is returned as is (wrapping ErrNotFound for a
// missing program).
func Run(ctx context.Context, c Cmd) (Result, error) {
	if len(c.Args) == 0 {
		return Result{}, errors.New("proc: no program")
	}
	if err := ctx.Err(); err != nil {
		return Result{ExitCode: -1}, err
	}
	logf, err := os.Create(c.Log)
	if err != nil {
		return Result{}, fmt.Errorf("create log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(c.Args[0], c.Args[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	if c.Tag != "" {
		cmd.Env = append(cmd.Env, TagVar+"="+c.Tag)
	}
	logFailed := make(chan struct{})
	out := &nudgeWriter{w: logf, grew: c.Grew, failed: func() { close(logFailed) }}
	var stopOnLog <-chan struct{} // nil, never ready: the program runs on
	if c.StopOnLogError {
		stopOnLog = logFailed
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = orphanOutputWait
	oomBefore, oomOK := oomKills()
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			err = fmt.Errorf("%w: %s: %w", ErrNotFound, c.Args[0], err)
		}
		fmt.Fprintf(logf, "cascade: cannot start %s: %v\n", c.Args[0], err)
		return Result{ExitCode: -1}, err
	}
	began := time.Now()
	if c.Started != nil {
		c.Started(cmd.Process.Pid)
	}
	done := make(chan struct{})
	var stopped, signalled atomic.Bool
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
			stopped.Store(true)
		case <-stopOnLog:
		}
		signalled.Store(true)
		grace := c.Grace
		if grace <= 0 {
			grace = DefaultGrace
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(grace):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	werr := cmd.Wait()
	wall := time.Since(began)
	close(done)
	out.flush()
	// A child that left grandchildren behind in its group takes them along.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	res := Result{ExitCode: cmd.ProcessState.ExitCode(), Wall: wall, PeakRSS: peakRSS(cmd.ProcessState)}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
		if ws.Signal() == syscall.SIGKILL && !signalled.Load() {
			var known bool
			res.OOMKilled, known = oomKilled(oomBefore, oomOK)
			res.OOMUnknown = !known
		}
	}
	var exitErr *exec.ExitError
	if werr != nil && !errors.As(werr, &exitErr) && !errors.Is(werr, exec.ErrWaitDelay) {
		return res, werr
	}
	if stopped.Load() {
		return res, ctx.Err()
	}
	if err := out.failure(); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return res, &LogError{Path: c.Log, Err: err}
	}
	return res, nil
}

// nudgeWriter writes to the log and calls grew, throttled. A write that
// fails is reported as done, so the program's output keeps flowing: the
// first failure is kept (see failure) and failed is called once.
type nudgeWriter struct {
	mu      sync.Mutex
	w       io.Writer
	grew    func()
	failed  func()
	err     error // the first failed write's
	last    time.Time
	pending bool
	timer   *time.Timer
}

const nudgeEvery = 100 * time.Millisecond

func (n *nudgeWriter) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	k, err := n.w.Write(p)
	if err != nil {
		if n.err == nil {
			n.err = err
			n.failed()
		}
		k, err = len(p), nil
	}
	if n.grew == nil {
		return k, err
	}
	if wait := nudgeEvery - time.Since(n.last); wait <= 0 {
		n.last = time.Now()
		go n.grew()
	} else if !n.pending {
		n.pending = true
		n.timer = time.AfterFunc(wait, func() {
			n.mu.Lock()
			n.pending, n.last = false, time.Now()
			n.mu.Unlock()
			n.grew()
		})
	}
	return k, err
}

// failure is the first write's error, or nil.
func (n *nudgeWriter) failure() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

func (n *nudgeWriter) flush() {
	if n.grew != nil {
		n.grew()
	}
}

// LastLines returns up to n last lines of the file, reading at most its
// last 64 KiB. A line the 64 KiB start in the middle of is left out, unless
// it is the only one.
func LastLines(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const window = 64 << 10
	cut := false
	if info, err := f.Stat(); err == nil && info.Size() > window {
		start := info.Size() - window
		var before [1]byte
		if _, err := f.ReadAt(before[:], start-1); err == nil {
			cut = before[0] != '\n'
		}
		f.Seek(start, io.SeekStart)
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), window+1)
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if cut && len(lines) > 1 {
		lines = lines[1:]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, sc.Err()
}
