package tracedir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/internal/kernelname"
)

// TracesDir is the folder of a trace that holds the tracer's output.
const TracesDir = "traces"

// The tracer's raw kernel lists, in TracesDir: one per CUDA context
// (RawKernelListCtxPrefix + "0x<handle>", 2025+ tracers) or one for the
// whole program (RawKernelList, older tracers).
const (
	RawKernelList          = "kernelslist"
	RawKernelListCtxPrefix = "kernelslist_ctx_"
)

// KernelsListG is the processed kernel list, relative to the trace
// directory; its presence means post-processing is done.
const KernelsListG = TracesDir + "/" + kernellist.Name

var rawKernelRe = regexp.MustCompile(`^kernel-\d+(-ctx_0x[0-9a-fA-F]+)?\.trace(\.xz)?$`)

// IsRawKernel reports whether a file's name is a raw kernel trace's, as
// the tracer writes it: kernel-<n>.trace, -ctx_0x<handle> before the
// extension for a context, .trace.xz compressed.
func IsRawKernel(name string) bool { return rawKernelRe.MatchString(path.Base(name)) }

// RawKernels counts the raw kernel traces (kernel-*.trace, .trace.xz) in
// the tree's traces folder.
func (t *Tree) RawKernels() int {
	n := 0
	for p := range t.Files {
		if IsRawKernelPath(p) {
			n++
		}
	}
	return n
}

// IsRawKernelPath reports whether a file of a trace, by slash path, is a
// raw kernel trace in its traces folder: what RawKernels counts.
func IsRawKernelPath(rel string) bool {
	return path.Dir(rel) == TracesDir && rawKernelRe.MatchString(path.Base(rel))
}

// IsUploadFile reports whether a file of a trace, by slash path, is one
// of the upload's data files, those a post-processor reads and never
// writes: a raw kernel trace, a raw kernel list or a stats file, in
// traces/. Processed files (kernelslist.g, the per-context
// kernelslist_ctx_*.g, .traceg, .tracez) are not, even when the upload
// brought them: a retry may write them again.
func IsUploadFile(rel string) bool {
	if path.Dir(rel) != TracesDir {
		return false
	}
	b := path.Base(rel)
	if strings.HasSuffix(b, ".g") {
		return false
	}
	_, list := RawListContext(b)
	return rawKernelRe.MatchString(b) || list || b == "stats.csv" || strings.HasPrefix(b, "stats_ctx_")
}

// RawListContext reads a raw kernel list's name: kernelslist_ctx_<ctx>
// gives its context, kernelslist "", each also with a "-" and anything
// after it (kernelslist_ctx_0x1-5-7: the list of one tracer run of a
// trace taken in several, see docs/sampling.md "Trace less next time"). ok is
// false for any other name, a processed list (.g) included.
func RawListContext(name string) (ctx string, ok bool) {
	b := path.Base(name)
	if strings.HasSuffix(b, ".g") || strings.HasPrefix(b, ".") {
		return "", false
	}
	if rest, found := strings.CutPrefix(b, RawKernelListCtxPrefix); found {
		ctx, _, _ = strings.Cut(rest, "-")
		return ctx, ctx != ""
	}
	return "", b == RawKernelList || strings.HasPrefix(b, RawKernelList+"-")
}

// KernelLists returns the raw kernel lists: traces/kernelslist_ctx_* (2025+
// tracers, one per CUDA context) and traces/kernelslist (older ones), each
// also as the lists of several tracer runs (RawListContext).
func (t *Tree) KernelLists() []string {
	var lists []string
	for _, l := range append(t.Glob(TracesDir, RawKernelListCtxPrefix+"*"), t.Glob(TracesDir, RawKernelList+"-*")...) {
		if _, ok := RawListContext(l); ok {
			lists = append(lists, l)
		}
	}
	if t.Has(TracesDir + "/" + RawKernelList) {
		lists = append(lists, TracesDir+"/"+RawKernelList)
	}
	return lists
}

// StatsFor returns the stats file that goes with a raw kernel list:
// stats_ctx_X for kernelslist_ctx_X (and kernelslist_ctx_X-…), stats.csv
// for kernelslist.
func StatsFor(list string) string {
	if ctx, _ := RawListContext(list); ctx != "" {
		return path.Join(path.Dir(list), "stats_ctx_"+ctx)
	}
	return path.Join(path.Dir(list), "stats.csv")
}

// StatsCSV is an older tracer's stats file, relative to the trace
// directory.
const StatsCSV = TracesDir + "/stats.csv"

// StatsFiles returns the stats files whose rows are the trace's kernels:
// traces/stats_ctx_* when there is any, else traces/stats.csv, as the
// Traces guide says ("The rows of traces/stats_ctx_*, or stats.csv from
// older tracers"). A stats.csv beside stats_ctx_* files is ignored
// (StatsCSVIgnored): never two kernel lists merged.
func (t *Tree) StatsFiles() []string {
	if files := t.Glob(TracesDir, "stats_ctx_*"); len(files) > 0 {
		return files
	}
	if t.Has(StatsCSV) {
		return []string{StatsCSV}
	}
	return nil
}

// StatsCSVIgnored reports whether the tree holds a traces/stats.csv that
// StatsFiles leaves out, the trace having stats_ctx_* files.
func (t *Tree) StatsCSVIgnored() bool {
	return t.Has(StatsCSV) && len(t.Glob(TracesDir, "stats_ctx_*")) > 0
}

// StatsTree is the tree of the trace at root as far as EachKernels and
// ReadKernels need it: the stats files in its traces folder, by name
// only (no size or time), without a stat of each of its files.
func StatsTree(root string) (*Tree, error) {
	t := &Tree{Root: root, Files: map[string]File{}, Dirs: map[string]time.Time{}}
	des, err := os.ReadDir(filepath.Join(root, TracesDir))
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	} else if err != nil {
		return nil, fmt.Errorf("list %s: %w", filepath.Join(root, TracesDir), err)
	}
	for _, de := range des {
		name := de.Name()
		if name != path.Base(StatsCSV) && !strings.HasPrefix(name, "stats_ctx_") {
			continue
		}
		if de.Type().IsRegular() || de.Type()&fs.ModeSymlink != 0 {
			rel := TracesDir + "/" + name
			t.Files[rel] = File{Path: rel, Link: de.Type()&fs.ModeSymlink != 0}
		}
	}
	return t, nil
}

var statsColumns = []string{"kernel id", "kernel mangled name", "grid_dimX", "grid_dimY", "grid_dimZ", "#blocks", "block_dimX", "block_dimY", "block_dimZ", "#threads", "total_insts", "total_reported_insts"}

// MaxWarnings caps how many problems one trace reports; the rest are
// counted in a last line.
const MaxWarnings = 50

// Warnings collects recovered problems, each naming its file and line.
type Warnings struct {
	List    []string
	dropped int
}

// Addf records a problem.
func (w *Warnings) Addf(format string, args ...any) {
	if len(w.List) < MaxWarnings {
		w.List = append(w.List, fmt.Sprintf(format, args...))
	} else {
		w.dropped++
	}
}

// Firstf records a problem before the others, as the one to read first:
// it is kept whatever the cap, the last of the others then counted as
// left out.
func (w *Warnings) Firstf(format string, args ...any) {
	w.List = slices.Insert(w.List, 0, fmt.Sprintf(format, args...))
	if len(w.List) > MaxWarnings {
		w.List = w.List[:MaxWarnings]
		w.dropped++
	}
}

// Result returns the problems, with a last line counting those left out.
func (w *Warnings) Result() []string {
	if w.dropped > 0 {
		return append(w.List, fmt.Sprintf("... and %d more", w.dropped))
	}
	return w.List
}

// AddResult records the problems another Warnings' Result returned (a
// child process's): its last line's count of those left out is counted
// as left out here too.
func (w *Warnings) AddResult(lines []string) {
	for _, l := range lines {
		var n int
		if _, err := fmt.Sscanf(l, "... and %d more", &n); err == nil && n > 0 && l == fmt.Sprintf("... and %d more", n) {
			w.dropped += n
			continue
		}
		w.Addf("%s", l)
	}
}

// ReadKernels reads every stats file of the tree into kernels, in file
// order then row order. A malformed row is reported in w and skipped; only
// an unreadable file is an error. For traces with many kernels,
// EachKernels keeps memory bounded.
func (t *Tree) ReadKernels(w *Warnings) ([]cascade.Kernel, error) {
	var ks []cascade.Kernel
	err := t.EachKernels(w, 1000, func(batch []cascade.Kernel) error {
		ks = append(ks, batch...)
		return nil
	})
	return ks, err
}

// EachKernels reads the stats files as ReadKernels does and hands the
// kernels to fn in batches of up to n, reusing the batch's memory: a trace
// with a million kernels costs one batch. A stats file whose rows were
// all refused (none is a kernel) is said so in a warning put first, naming
// the file and the first refusal: a trace never has no kernels quietly.
func (t *Tree) EachKernels(w *Warnings, n int, fn func([]cascade.Kernel) error) error {
	batch := make([]cascade.Kernel, 0, n)
	emit := func(k cascade.Kernel) error {
		batch = append(batch, k)
		if len(batch) < n {
			return nil
		}
		err := fn(batch)
		batch = batch[:0]
		return err
	}
	names := demangler{}
	if t.StatsCSVIgnored() {
		w.Addf("%s: ignored: the trace has %s/stats_ctx_* files, whose rows are its kernels (stats.csv is an older tracer's)", StatsCSV, TracesDir)
	}
	for _, rel := range t.StatsFiles() {
		var ctx *string
		if c, ok := strings.CutPrefix(path.Base(rel), "stats_ctx_"); ok {
			ctx = &c
		}
		f, err := os.Open(filepath.Join(t.Root, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		got, err := readStats(f, rel, ctx, names, emit, w)
		f.Close()
		if err != nil {
			return err
		}
		if got.kernels == 0 && got.refused > 0 {
			w.Firstf("%s: none of its rows is a kernel: %d refused, the first on line %d: %s", rel, got.refused, got.firstLine, got.first)
		}
	}
	if len(batch) > 0 {
		return fn(batch)
	}
	return nil
}

// statsRead counts what readStats made of a stats file's rows.
type statsRead struct {
	kernels, refused int
	first            string // why the first refused row was refused
	firstLine        int
}

func readStats(r io.Reader, rel string, ctx *string, names demangler, emit func(cascade.Kernel) error, w *Warnings) (statsRead, error) {
	var got statsRead
	refuse := func(line int, err error) {
		w.Addf("%s:%d: %v", rel, line, err)
		if got.refused++; got.refused == 1 {
			got.first, got.firstLine = err.Error(), line
		}
	}
	err := eachRow(r, rel, w, func(line int, cols []string, bad error) error {
		if bad != nil {
			refuse(line, bad)
			return nil
		}
		k, err := parseStatsRow(cols, ctx, names)
		if err != nil {
			refuse(line, err)
			return nil
		}
		if _, ok := count32(cols[11]); !ok {
			// Only the cut-short check reads it (EachStatsRow): the
			// kernel stands.
			w.Addf("%s:%d: total_reported_insts: %q is not a 32-bit count; the kernel is kept, but its trace is not checked for being cut short", rel, line, cols[11])
		}
		got.kernels++
		return emit(k)
	})
	return got, err
}

func parseStatsRow(cols []string, ctx *string, names demangler) (cascade.Kernel, error) {
	k := cascade.Kernel{Context: ctx}
	if len(cols) != len(statsColumns) {
		return k, fmt.Errorf("want %d columns, got %d", len(statsColumns), len(cols))
	}
	file, n, ok := rowTraceFile(cols[0])
	if !ok {
		return k, fmt.Errorf("kernel id: %q is neither a kernel trace name nor an id", cols[0])
	}
	k.TraceFile, k.KernelID = file, n
	if k.Name = cols[1]; k.Name == "" {
		return k, errors.New("kernel mangled name: empty")
	}
	k.Name, k.DemangledName = names.demangle(k.Name)
	for i, dst := range [...]*int{&k.GridX, &k.GridY, &k.GridZ, nil, &k.BlockX, &k.BlockY, &k.BlockZ} {
		if dst == nil {
			continue
		}
		v, err := strconv.Atoi(cols[2+i])
		if err != nil || v < 0 {
			return k, fmt.Errorf("%s: %q is not a non-negative integer", statsColumns[2+i], cols[2+i])
		}
		*dst = v
	}
	insts, ok := count32(cols[10])
	if !ok {
		return k, fmt.Errorf("total_insts: %q is not a 32-bit count", cols[10])
	}
	k.Instructions = cascade.Ptr(int64(insts))
	return k, nil
}

// traceFileID is the id of a kernel trace's file name, the digits after
// "kernel-" ("kernel-12-ctx_0x1.trace.xz" gives "12"), or "" when the
// name does not start so: ^kernel-(\d+) without a regular expression's
// cost on each of a million rows.
func traceFileID(name string) string {
	rest, ok := strings.CutPrefix(name, "kernel-")
	if !ok {
		return ""
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	return rest[:n]
}

// demangler demangles kernel names, each distinct one once: a trace
// launches the same few hundred kernels again and again, and traces of
// one program share them. It hands out one copy of each name, so a batch
// of kernels shares their strings. Names it met in earlier traces come
// from a process-wide cache.
type demangler map[string][2]string

// maxNames bounds a demangler's memory on a trace of all-distinct names,
// and the shared cache's.
const maxNames = 1 << 16

var shared struct {
	sync.Mutex
	names map[string][2]string
}

func (d demangler) demangle(name string) (string, string) {
	if n, ok := d[name]; ok {
		return n[0], n[1]
	}
	shared.Lock()
	n, ok := shared.names[name]
	shared.Unlock()
	if !ok {
		full, _ := kernelname.Demangle(name)
		n = [2]string{strings.Clone(name), full}
		shared.Lock()
		if shared.names == nil || len(shared.names) >= maxNames {
			shared.names = map[string][2]string{} // start over: bounded
		}
		shared.names[n[0]] = n
		shared.Unlock()
	}
	if d != nil && len(d) < maxNames {
		d[n[0]] = n
	}
	return n[0], n[1]
}

// CountKernelLines counts the kernel lines (lines starting with "kernel")
// of a kernelslist.g.
func CountKernelLines(file string) (int, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if bytes.HasPrefix(bytes.TrimSpace(sc.Bytes()), []byte("kernel")) {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("read %s: %w", file, err)
	}
	return n, nil
}
