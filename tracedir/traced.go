package tracedir

import (
	"bufio"
	"bytes"
	"fmt"
	"os"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
)

// Traced is what a trace's kernelslist.g says of its launches: how many
// kernel lines it has and which kernels they name. A trace taken with the
// tracer's DYNAMIC_KERNEL_LIMIT_START/END ranges (a sampling plan's
// traceList, one tracer run a range) has a stats row for every launch
// but kernel traces, and kernel lines, for the launches of its ranges
// only: [Traced.Mark] tells the others.
type Traced struct {
	// Lines counts the kernel lines (lines starting with "kernel").
	Lines int
	refs  map[kernellist.Ref]struct{}
	// open: a kernel line names no kernel-N[-ctx_0x…] file, so which
	// launches it traces is not known and every launch counts as traced.
	open bool
}

// ReadTraced reads a kernelslist.g's kernel lines.
func ReadTraced(file string) (*Traced, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t := &Traced{refs: map[kernellist.Ref]struct{}{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if !bytes.HasPrefix(line, []byte("kernel")) {
			continue
		}
		t.Lines++
		ref, ok := kernellist.ParseTraceFileName(string(line))
		if !ok {
			t.open = true
			continue
		}
		t.refs[ref] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return t, nil
}

// Mark sets k.Untraced when kernelslist.g names no kernel trace of it
// (matched by kernel id and CUDA context), and reports it.
func (t *Traced) Mark(k *cascade.Kernel) bool {
	if t == nil || t.open {
		return false
	}
	ref := kernellist.Ref{ID: k.KernelID}
	if k.Context != nil {
		ref.Context = kernellist.NormalizeContext(*k.Context)
	}
	_, ok := t.refs[ref]
	k.Untraced = !ok
	return k.Untraced
}
