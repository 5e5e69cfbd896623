package tracedir

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"

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
	// refs counts, of each kernel a kernel line names, the stats rows
	// Mark was given of it.
	refs map[kernellist.Ref]int32
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
	t := &Traced{refs: map[kernellist.Ref]int32{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if !bytes.HasPrefix(line, []byte("kernel")) {
			continue
		}
		if err := kernellist.CheckTraceName(string(line)); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		t.Lines++
		ref, ok := kernellist.ParseTraceFileName(string(line))
		if !ok {
			t.open = true
			continue
		}
		t.refs[ref] = 0
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
	n, ok := t.refs[ref]
	if ok {
		t.refs[ref] = n + 1
	}
	k.Untraced = !ok
	return k.Untraced
}

// Check adds to w, once every stats row was given to Mark, what the
// trace's two lists disagree on, which nothing else says: kernels
// kernelslist.g names that no stats row lists (the kernel list lacks
// them: their grid, block and instruction count are unknown), and
// kernels two stats rows list. Nothing for a list of other names.
func (t *Traced) Check(w *Warnings) {
	if t == nil || t.open {
		return
	}
	var unlisted, twice []kernellist.Ref
	for ref, n := range t.refs {
		switch {
		case n == 0:
			unlisted = append(unlisted, ref)
		case n > 1:
			twice = append(twice, ref)
		}
	}
	cmpRef := func(a, b kernellist.Ref) int {
		return cmp.Or(cmp.Compare(a.Context, b.Context), cmp.Compare(a.ID, b.ID))
	}
	if len(unlisted) > 0 {
		slices.SortFunc(unlisted, cmpRef)
		w.Addf("%s names %d kernel trace%s that no stats file lists (kernel %s first): the kernel list lacks %s",
			KernelsListG, len(unlisted), plural(len(unlisted)), refText(unlisted[0]), them(len(unlisted)))
	}
	if len(twice) > 0 {
		slices.SortFunc(twice, cmpRef)
		w.Addf("the stats files list %d kernel%s more than once (kernel %s first): the kernel list has each as often",
			len(twice), plural(len(twice)), refText(twice[0]))
	}
}

func refText(r kernellist.Ref) string {
	if r.Context == "" {
		return strconv.Itoa(r.ID)
	}
	return fmt.Sprintf("%d of context %s", r.ID, r.Context)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
