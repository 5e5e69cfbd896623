package posttraces

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/cascade-sim/cascade/accelsim/tracez"
	"github.com/cascade-sim/cascade/tracedir"
)

// Tuning of the memory bound. A kernel in flight holds its partition
// buffers (≤ partBufTotal) while it is read, and while it is written up to
// jobs+2 assembled partitions of ≤ maxPartMem raw bytes each.
const (
	partBufTotal      = 16 << 20
	defaultMaxPartMem = 12 << 20
	defaultTargetPart = 4 << 20
)

// Options configures [Run].
type Options struct {
	// Jobs is how many kernels are processed at once, and how many
	// partitions (of any kernels) are assembled at once; 0 means the CPUs
	// this process may use (runtime.GOMAXPROCS: affinity and cgroup quota).
	Jobs int
	// Text writes .traceg (.traceg.xz for .xz input) instead of .tracez.
	Text bool
	// WorkDir holds the spill files; "" means os.TempDir().
	WorkDir string
	// SubchunkInsts is the .tracez frame size; 0 means
	// tracez.DefaultSubchunkInsts (2048).
	SubchunkInsts int
	// XZ is the xz binary; "" looks up xz on PATH, "-" forces the pure-Go codec.
	XZ string
	// Logger receives warnings (empty blocks) and progress; nil discards.
	Logger *slog.Logger
	// Warnings, when not nil, receives the problems of the input that fail
	// nothing but its user should hear of: kernel traces with fewer
	// instruction lines than their stats rows say, and stats rows whose
	// kernel name or grid contradicts their kernel trace's header
	// (checkStats). Logger receives them too.
	Warnings *tracedir.Warnings
	// MaxPartMem overrides the largest partition assembled in memory (tests).
	MaxPartMem int64
}

// processor is one Run's shared state; safe for concurrent use by its kernels.
type processor struct {
	jobs       int
	text       bool
	xz         string
	log        *slog.Logger
	enc        *tracez.Encoder
	cpu        chan struct{} // bounds partitions assembled at once
	spillRoot  string
	maxPartMem int64
	targetPart int64

	mu      sync.Mutex
	written []string // outputs renamed into place; see removeWritten
}

func newProcessor(opts Options) (*processor, error) {
	p := &processor{jobs: opts.Jobs, text: opts.Text, xz: xzProgram(opts.XZ), log: opts.Logger,
		maxPartMem: opts.MaxPartMem, targetPart: defaultTargetPart}
	if p.jobs <= 0 {
		p.jobs = runtime.GOMAXPROCS(0)
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.maxPartMem <= 0 {
		p.maxPartMem = defaultMaxPartMem
	}
	p.targetPart = min(p.targetPart, p.maxPartMem/2+1)
	p.cpu = make(chan struct{}, p.jobs)
	sub := opts.SubchunkInsts
	if sub < 0 {
		return nil, fmt.Errorf("subchunk size %d: want a positive number of instructions", sub)
	}
	if sub == 0 {
		sub = tracez.DefaultSubchunkInsts
	}
	var err error
	if p.enc, err = tracez.NewEncoder(sub, p.jobs); err != nil {
		return nil, err
	}
	root := opts.WorkDir
	if root == "" {
		root = os.TempDir()
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("create work dir: %w", err)
	}
	p.spillRoot = root
	return p, nil
}

// outputName maps a raw trace name to its post-processed name.
func outputName(trace string, text bool) (string, error) {
	switch {
	case strings.HasSuffix(trace, ".trace.xz"):
		base := strings.TrimSuffix(trace, ".xz")
		if text {
			return base + "g.xz", nil
		}
		return base + "z", nil
	case strings.HasSuffix(trace, ".trace"):
		if text {
			return trace + "g", nil
		}
		return trace + "z", nil
	}
	return "", fmt.Errorf("kernel trace %q ends in neither .trace nor .trace.xz", trace)
}

// spillPattern names a kernel's spill folder in the spill root.
const spillPattern = "posttraces-*"

// RemoveSpills removes the spill folders in root (Options.WorkDir) that
// post-processors killed before their deferred removal left: a raw
// kernel's size each. Call it only when no post-processor spills there.
func RemoveSpills(root string) error {
	dirs, err := filepath.Glob(filepath.Join(root, spillPattern))
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		errs = append(errs, os.RemoveAll(d))
	}
	return errors.Join(errs...)
}

// processKernel post-processes the raw trace at in into out, through a
// temporary dotfile beside out renamed when complete, and returns what it
// read that the stats rows are checked against.
func (p *processor) processKernel(ctx context.Context, in, out string) (_ traced, err error) {
	spill, err := os.MkdirTemp(p.spillRoot, spillPattern)
	if err != nil {
		return traced{}, fmt.Errorf("create spill dir: %w", err)
	}
	defer os.RemoveAll(spill)
	defer func() {
		if err != nil {
			err = p.explainFull(err, in, out, spill)
		}
	}()

	k, err := p.partition(ctx, in, spill)
	if err != nil {
		return traced{}, err
	}
	defer k.parts.release()

	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return traced{}, fmt.Errorf("create output for %s: %w", out, err)
	}
	f.Chmod(0o644) // CreateTemp makes 0600; outputs are as readable as their inputs
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()

	var (
		em   emitter
		sink io.WriteCloser
	)
	switch {
	case !p.text:
		if em, err = newTracezEmitter(f, k.header, p.enc, spill); err != nil {
			return traced{}, err
		}
	case strings.HasSuffix(out, ".xz"):
		if sink, err = newXZSink(f, p.xz); err != nil {
			return traced{}, err
		}
		em = newTextEmitter(sink, k.header, k.layout == layoutCluster)
	default:
		em = newTextEmitter(f, k.header, k.layout == layoutCluster)
	}
	aerr := p.assemble(ctx, k, em, spill)
	if sink != nil {
		if cerr := sink.Close(); aerr == nil && cerr != nil {
			aerr = fmt.Errorf("write %s: %w", out, cerr)
		}
	}
	if aerr != nil {
		return traced{}, fmt.Errorf("%s: %w", k.name, aerr)
	}
	if err = f.Close(); err != nil {
		return traced{}, fmt.Errorf("write %s: %w", out, err)
	}
	if err = os.Rename(f.Name(), out); err != nil {
		return traced{}, fmt.Errorf("rename %s: %w", out, err)
	}
	p.wrote(out)
	p.log.Debug("kernel post-processed", "path", out, "insts", k.insts)
	return traced{insts: k.insts, name: k.kname, grid: k.grid}, nil
}
