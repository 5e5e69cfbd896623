package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// How the program reads what it is given: a kernel's trace, as Accel-Sim
// opens it (through the shell when its path holds what the shell acts
// on), and FAKESIM_STEP's pipe.

// stepper waits on FAKESIM_STEP's named pipe. It holds the pipe open for
// reading and writing from the first step on: a writer's open never waits
// and no end of file ever comes, so a line written while the program is
// between two steps waits in the pipe instead of being lost when a
// reader closes.
type stepper struct {
	path     string
	launches bool // FAKESIM_STEP_LAUNCH: a step before each launch after the first too
	f        *os.File
}

// wait reads one line, a byte at a time so that nothing after it is taken.
func (s *stepper) wait() error {
	if s.f == nil {
		f, err := os.OpenFile(s.path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		s.f = f
	}
	b := make([]byte, 1)
	for {
		if _, err := s.f.Read(b); err != nil {
			return err
		}
		if b[0] == '\n' {
			return nil
		}
	}
}

// readTrace opens a kernel's trace as Accel-Sim does (cat for .traceg, xz -dc
// for .xz, and in version 2 the binary reader for .tracez) and reads its
// header. Any other file type makes it throw, and the uncaught exception
// aborts the program.
func readTrace(k *kernel, version string, stdout, stderr io.Writer, say func(string, ...any)) (code int, stop bool) {
	base := filepath.Base(k.path)
	switch {
	case strings.HasSuffix(base, ".traceg"), strings.HasSuffix(base, ".xz"):
	case strings.HasSuffix(base, ".tracez") && version == fakesim.Version2:
	default:
		fmt.Fprintf(stderr, "terminate called after throwing an instance of 'std::runtime_error'\n  what():  Unsupported file type!\n")
		abort(stdout)
		return fakesim.ExitAbort, true // not reached
	}
	if !kernellist.SafeTracePath(k.path) {
		// Accel-Sim's popen("cat <path>") hands the path to the shell:
		// a blank splits it, a ';' or '$' runs what follows. Only such a
		// path goes through sh here, as it would there.
		return readThroughShell(k, stderr, say)
	}
	f, err := os.Open(k.path)
	if err != nil {
		// popen("cat <path>") succeeds, cat complains, and the header stays
		// empty: binary version 0.
		fmt.Fprintf(stderr, "cat: %s: No such file or directory\n", k.path)
		say("unsupported binary version: 0")
		return 0, true
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil {
		k.size = info.Size()
	}
	k.name = strings.TrimSuffix(base, filepath.Ext(base))
	k.binary = -1
	if strings.HasSuffix(base, ".xz") {
		return 0, false
	}
	if strings.HasSuffix(base, ".traceg") && !endsWithNewline(f, k.size) {
		// PipeReader::readLine asserts that every line it reads, the last
		// one included, ends with a newline.
		fmt.Fprintf(stderr, "%s: trace_parser.cc:457: bool PipeReader::readLine(std::string&): Assertion 'line.back() == '\\n'' failed.\n", os.Args[0])
		return fakesim.ExitAbort, true
	}
	// The header is text up to the first '#' line (.traceg) or NUL (.tracez).
	head := make([]byte, 64*1024)
	nr, _ := io.ReadFull(f, head)
	head = head[:nr]
	if i := bytes.IndexByte(head, 0); i >= 0 {
		head = head[:i]
	}
	for line := range strings.SplitSeq(string(head), "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		readHeaderLine(k, line)
	}
	return 0, false
}

// readHeaderLine reads what the program uses of a trace header's line.
func readHeaderLine(k *kernel, line string) {
	key, val, ok := strings.Cut(line, "=")
	if !ok {
		return
	}
	val = strings.TrimSpace(val)
	switch strings.TrimSpace(key) {
	case "-kernel name":
		k.name = val
	case "-binary version":
		if v, err := strconv.Atoi(val); err == nil {
			k.binary = v
		}
	case "-cuda stream id":
		k.stream, _ = strconv.ParseInt(val, 10, 64)
	}
}

// endsWithNewline reports whether the file of the given size ends with a
// newline; an empty file has no line to assert on.
func endsWithNewline(f *os.File, size int64) bool {
	if size == 0 {
		return true
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, size-1); err != nil {
		return false
	}
	return b[0] == '\n'
}

// readThroughShell reads the header of the trace at a path the shell acts
// on by running what Accel-Sim's popen runs, "cat <path>": what the shell
// makes of the path is done, and what cat prints is the trace.
func readThroughShell(k *kernel, stderr io.Writer, say func(string, ...any)) (code int, stop bool) {
	cmd := exec.Command("sh", "-c", "cat "+k.path)
	cmd.Stderr = stderr
	out, _ := cmd.Output()
	k.size = int64(len(out))
	base := filepath.Base(k.path)
	k.name = strings.TrimSuffix(base, filepath.Ext(base))
	k.binary = -1
	if len(out) == 0 {
		say("unsupported binary version: 0")
		return 0, true
	}
	if i := bytes.IndexByte(out, '#'); i >= 0 {
		out = out[:i]
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		readHeaderLine(k, line)
	}
	return 0, false
}
