package scanner

import (
	"fmt"
	"reflect"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
)

// look is what one walk of a trace says: its scan fields and, for an
// uploading trace, the state it moves to ("" to stay).
type look struct {
	bytes           int64
	rawKernels      int
	hasRealTiming   bool
	hasStepTimeline bool
	signature       string
	meta            *tracedir.Metadata // nil when missing or broken

	newState cascade.TraceState
	err      string
}

// inspect reads the walked tree and applies the guide's rules.
func (s *Scanner) inspect(tree *tracedir.Tree, e *entry, now time.Time) look {
	l := look{
		bytes:           tree.Bytes(),
		rawKernels:      tree.RawKernels(),
		hasStepTimeline: tree.HasStepTimeline(),
		signature:       e.treeSig,
	}
	var meta tracedir.Metadata
	var metaErr error
	hasMeta := tree.Has(tracedir.MetadataFile)
	if hasMeta {
		meta, metaErr = tracedir.ReadMetadata(tree.Root)
		if metaErr == nil {
			l.meta = &meta
		}
	}
	l.hasRealTiming = tree.HasRealTiming(meta)
	// The state a trace moves to is decided for every walk but applied only
	// to an uploading trace, inside the committing transaction: a retried
	// trace is uploading again before this scanner hears of it.
	switch {
	case !hasMeta:
		// Still uploading: the upload is complete only once metadata.json exists.
	case metaErr != nil:
		// A half-written file does not parse either: fail only once it
		// has stopped changing.
		if s.quiet(e.metaSince, now) {
			l.fail(metaErr.Error())
		}
	case meta.Status == "failed":
		msg := meta.Error
		if msg == "" {
			msg = `metadata.json: status is "failed"`
		}
		l.fail(msg)
	case meta.HasFiles:
		complete, err := filesComplete(tree, meta.Files)
		if err != nil {
			l.fail(err.Error())
		} else if complete {
			l.newState = cascade.TraceProcessing
		}
	default:
		if streamComplete(tree) && s.quiet(e.treeSince, now) {
			l.newState = cascade.TraceProcessing
		}
	}
	return l
}

func (l *look) fail(msg string) { l.newState, l.err = cascade.TraceFailed, msg }

// filesComplete applies the guide's first rule: every listed file is on
// disk with the listed size. An entry that leaves the trace directory is an
// error; one that is missing or short means the upload goes on.
func filesComplete(tree *tracedir.Tree, files []tracedir.FileEntry) (bool, error) {
	complete := true
	for i, f := range files {
		rel, err := tree.Resolve(f.Path)
		if err != nil {
			return false, fmt.Errorf("metadata.json: files[%d]: %w", i, err)
		}
		got, ok := tree.Files[rel]
		if !ok || got.Link || got.Size != f.Size {
			complete = false
		}
	}
	return complete, nil
}

// streamComplete applies the second rule's file part: at least one kernel
// list, and a stats file for each.
func streamComplete(tree *tracedir.Tree) bool {
	lists := tree.KernelLists()
	for _, l := range lists {
		if !tree.Has(tracedir.StatsFor(l)) {
			return false
		}
	}
	return len(lists) > 0
}

// apply writes the look's fields into t.
func (l look) apply(t *cascade.Trace) {
	t.Bytes = l.bytes
	t.HasRealTiming = l.hasRealTiming
	t.HasStepTimeline = l.hasStepTimeline
	t.Signature = l.signature
	if t.State == cascade.TraceUploading || t.State == cascade.TraceProcessing {
		t.KernelCount = l.rawKernels
	}
	if t.TraceGPUArch == "" {
		t.TraceGPUArch = cascade.DefaultTraceGPUArch
	}
	if t.Prompts == nil {
		t.Prompts = []string{}
	}
	if m := l.meta; m != nil {
		t.Model, t.Layers, t.SourceGPU, t.SuggestedSimConfig = m.Model, m.Layers, m.GPU, m.SuggestedSimConfig
		t.Prompts = m.Prompts
		if t.Prompts == nil {
			t.Prompts = []string{}
		}
		t.TraceGPUArch = cascade.DefaultTraceGPUArch
		if m.TraceGPUArch != nil && *m.TraceGPUArch != "" {
			t.TraceGPUArch = *m.TraceGPUArch
		}
	}
	if l.newState != "" && t.State == cascade.TraceUploading {
		t.State = l.newState
		t.Error = nil
		if l.newState == cascade.TraceFailed {
			t.Error = &l.err
		}
	}
}

// equalScan reports whether two versions of a trace differ in nothing the
// scanner writes.
func equalScan(a, b cascade.Trace) bool {
	a.UpdatedAt, b.UpdatedAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}
