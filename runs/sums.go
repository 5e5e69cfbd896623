package runs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// Sums are the content sums a run records when it starts (see
// [cascade.RunFigures]) and a launch compares with succeeded runs'.
type Sums struct{ Simulator, Config, Trace string }

// complete reports whether every sum is known: only then may two runs'
// sums say they give the same result.
func (s Sums) complete() bool { return s.Simulator != "" && s.Config != "" && s.Trace != "" }

// record sets r's figures' sums.
func (s Sums) record(r *cascade.Run) {
	r.Figures.SimulatorSum, r.Figures.ConfigSum, r.Figures.TraceSum = s.Simulator, s.Config, s.Trace
}

// of reads r's recorded sums.
func sumsOf(r cascade.Run) Sums {
	return Sums{Simulator: r.Figures.SimulatorSum, Config: r.Figures.ConfigSum, Trace: r.Figures.TraceSum}
}

// sums computes the sums of what a run of the trace under cfg would use
// now. A sum that cannot be computed (no simulator configured, a file
// gone) is "": such a run is never taken for another.
func (m *Manager) sums(traceID string, cfg cascade.SimConfig) Sums {
	var s Sums
	var err error
	if len(m.cfg.Simulator) > 0 {
		if s.Simulator, err = SimulatorSum(m.cfg.Simulator); err != nil {
			m.log.Warn("simulator sum", "err", err)
		}
	}
	if s.Config, err = ConfigSum(cfg, filepath.Base(m.logs.LogPath("r"))); err != nil {
		m.log.Warn("config sum", "config", cfg.Name, "err", err)
	}
	if s.Trace, err = TraceSum(filepath.Join(m.traceDir(traceID), filepath.FromSlash(tracedir.KernelsListG))); err != nil {
		m.log.Warn("trace sum", "trace", traceID, "err", err)
	}
	return s
}

// simulatorSums caches SimulatorSum by the binary's path, size and
// modification time: the simulator is hashed once, not at every launch.
var simulatorSums sync.Map // simulatorKey → string

type simulatorKey struct {
	path  string
	size  int64
	mtime time.Time
}

// SimulatorSum returns the hex SHA-256 of the simulator command cmd: of
// its program's content (cmd[0], a path or looked up in PATH as the
// executor runs it) when cmd is the program alone, as sha256sum prints it
// for accel-sim.out; else of that sum followed by each further word, so
// that a wrapper's arguments ("env FAKESIM_MODE=slow fakesim") count too.
// The program's sum is computed once for each path, size and modification
// time.
func SimulatorSum(cmd []string) (string, error) {
	if len(cmd) == 0 {
		return "", errors.New("no simulator command")
	}
	sum, err := programSum(cmd[0])
	if err != nil || len(cmd) == 1 {
		return sum, err
	}
	h := sha256.New()
	h.Write([]byte(sum))
	for _, w := range cmd[1:] {
		h.Write([]byte("\x00" + w))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// programSum is the hex SHA-256 of the program prog's content.
func programSum(prog string) (string, error) {
	path, err := exec.LookPath(prog)
	if err != nil {
		return "", fmt.Errorf("find simulator: %w", err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", err
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("simulator: %w", err)
	}
	key := simulatorKey{path: path, size: info.Size(), mtime: info.ModTime()}
	if s, ok := simulatorSums.Load(key); ok {
		return s.(string), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("simulator: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read simulator: %w", err)
	}
	s := hex.EncodeToString(h.Sum(nil))
	simulatorSums.Store(key, s)
	return s, nil
}

// ConfigSum returns the hex SHA-256 of the config files a run under cfg
// uses: gpgpusim.config, trace.config and every side file their folders
// hold (the interconnect config, AccelWattch's files), as linked into a
// run's directory, in sorted name order, each as its name, its size and
// its content, then a variant's overrides. Subdirectories are left out;
// reserved are names not linked (the log's).
func ConfigSum(cfg cascade.SimConfig, reserved ...string) (string, error) {
	files, err := configFiles(cfg, reserved...)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, f := range files {
		if err := hashFile(h, f.name, f.path); err != nil {
			return "", fmt.Errorf("config %s: %w", cfg.Name, err)
		}
	}
	// A variant's overrides, as the simulator is given them (a tested
	// config's sum is as it was before variants).
	for _, p := range cfg.Params {
		fmt.Fprintf(h, "\x00override\x00%s\x00%s", p.Option, p.Value)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile writes a file's name, size and content to h; a directory is
// skipped.
func hashFile(h io.Writer, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.IsDir() {
		return nil
	}
	fmt.Fprintf(h, "%s\x00%d\x00", name, info.Size())
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	if n != info.Size() {
		return fmt.Errorf("%s changed while it was read", name)
	}
	return nil
}

// TraceSum returns the hex SHA-256 fingerprint of a trace's simulated
// input: the content of its kernel list (the kernelslist.g at list), then,
// for each kernel file the list names, in its order, the file's name,
// size and modification time (nanoseconds). It is a fingerprint, not a
// hash of the kernel files' content: a trace's files run to 100 GB, which
// a launch cannot read. A trace's files are written once, when it is
// post-processed, and never edited; one that is post-processed again has
// new modification times, and so another sum: a run of it is never taken
// for one of the old files.
func TraceSum(list string) (string, error) {
	data, err := os.ReadFile(list)
	if err != nil {
		return "", fmt.Errorf("read kernel list: %w", err)
	}
	cmds, err := kernellist.Parse(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("%s: %w", list, err)
	}
	l := &kernellist.List{Path: list, Commands: cmds}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(list), len(data))
	h.Write(data)
	for _, c := range l.Kernels() {
		info, err := os.Stat(l.TracePath(c))
		if err != nil {
			return "", fmt.Errorf("kernel file: %w", err)
		}
		h.Write([]byte(c.TraceFile + "\x00" + strconv.FormatInt(info.Size(), 10) + "\x00" + strconv.FormatInt(info.ModTime().UnixNano(), 10) + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
