package samples

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

//go:embed sample
var sample embed.FS

// SimConfigs holds sim-configs/: excerpts of Accel-Sim's tested configs
// SM90_H100, SM86_RTX3070, SM7_QV100 and SM6_TITANX (with the interconnect
// file its gpgpusim.config names), enough for the simulator's
// command line and for reading compute capability and core clock. The
// quickstart points CASCADE_SIM_CONFIGS_DIR at the directory; tests write
// them with package simconfigtest.
//
//go:embed sim-configs
var SimConfigs embed.FS

// SampleID is the id of the seeded sample trace.
const SampleID = "sample"

// MovedID is the sample's id while a trace uploaded as SampleID holds that
// one: a dotfile name, which no trace in the bucket can have.
const MovedID = "." + SampleID

// MovedWarning is the first of the sample's warnings while it is MovedID.
var MovedWarning = fmt.Sprintf("An uploaded trace named %q is in the bucket and takes that id; this seeded sample is served as %q until that trace is removed.", SampleID, MovedID)

// Store is the storage Seed needs; *db.DB implements it.
type Store interface {
	Trace(ctx context.Context, id string) (cascade.Trace, error)
	UpdateTrace(ctx context.Context, id string, fn func(t *cascade.Trace, found bool) error) (cascade.Trace, bool, error)
	ReplaceKernels(ctx context.Context, traceID string, ks []cascade.Kernel) error
	DeleteTrace(ctx context.Context, id string) error
}

// Seed writes the sample trace's files to dir/sample and stores it as a
// ready trace with sample set, replacing the one a previous start seeded.
// It is stored as SampleID, or as MovedID, with a warning, when an uploaded
// trace holds that id (the scanner moves the sample the same way when the
// upload comes later, and back when it goes).
func Seed(ctx context.Context, store Store, dir string) (cascade.Trace, error) {
	id, stale := SampleID, MovedID
	switch t, err := store.Trace(ctx, SampleID); {
	case err == nil && !t.Sample:
		id, stale = MovedID, SampleID
	case err != nil && cascade.ErrorCode(err) != cascade.ENOTFOUND:
		return cascade.Trace{}, err
	}
	if t, err := store.Trace(ctx, stale); err == nil && t.Sample {
		if err := store.DeleteTrace(ctx, stale); err != nil {
			return cascade.Trace{}, err
		}
	}
	dst := filepath.Join(dir, SampleID)
	if err := os.RemoveAll(dst); err != nil {
		return cascade.Trace{}, err
	}
	err := fs.WalkDir(sample, "sample", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := sample.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		return cascade.Trace{}, fmt.Errorf("write sample trace: %w", err)
	}
	tree, err := tracedir.Walk(dst)
	if err != nil {
		return cascade.Trace{}, err
	}
	meta, err := tracedir.ReadMetadata(dst)
	if err != nil {
		return cascade.Trace{}, fmt.Errorf("sample trace: %w", err)
	}
	var w tracedir.Warnings
	kernels, err := tree.ReadKernels(&w)
	if err != nil {
		return cascade.Trace{}, fmt.Errorf("sample trace: %w", err)
	}
	count, err := tracedir.CountKernelLines(filepath.Join(dst, filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil {
		return cascade.Trace{}, fmt.Errorf("sample trace: %w", err)
	}
	t, _, err := store.UpdateTrace(ctx, id, func(t *cascade.Trace, _ bool) error {
		*t = cascade.Trace{
			ID: id, Seq: t.Seq, CreatedAt: t.CreatedAt,
			State: cascade.TraceReady, Sample: true,
			Model: meta.Model, Layers: meta.Layers, Prompts: meta.Prompts, SourceGPU: meta.GPU,
			TraceGPUArch: cascade.Deref(meta.TraceGPUArch), SuggestedSimConfig: meta.SuggestedSimConfig,
			KernelCount: count, Bytes: tree.Bytes(), Warnings: w.Result(),
			HasRealTiming: tree.HasRealTiming(meta), HasStepTimeline: tree.HasStepTimeline(),
		}
		if id == MovedID {
			t.Warnings = append([]string{MovedWarning}, t.Warnings...)
		}
		if t.Warnings == nil {
			t.Warnings = []string{}
		}
		return nil
	})
	if err != nil {
		return t, err
	}
	// After the row: kernels go to a trace that exists. The server serves
	// nothing until the seed is done.
	if err := store.ReplaceKernels(ctx, id, kernels); err != nil {
		return cascade.Trace{}, err
	}
	return t, nil
}
