package tracegen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// TraceRange is one run of the NVBit tracer with
// DYNAMIC_KERNEL_LIMIT_START=Start and DYNAMIC_KERNEL_LIMIT_END=End (kernel
// ids, both inclusive) and TERMINATE_UPON_LIMIT=1: a line of a sampling
// plan's traceList. Context is the CUDA context the ids are of ("0x…"),
// "" for a single-context trace (or any context).
type TraceRange struct {
	Context    string
	Start, End int
}

// TraceLess writes into dst the trace the tracer gives when it is run
// once per range of ranges on the program whose full raw trace is in
// src (as GenerateLLM or Generate write it), and the runs' outputs are
// merged, as docs/sampling.md "Trace less next time" says:
//
//   - the kernel traces of the ranges' kernels only;
//   - each run's raw kernel list, for each context a range is of, under
//     the tracer's name followed by "-<start>-<end>"
//     (kernelslist_ctx_0x…-5-7, kernelslist-5-7): a run lists every
//     MemcpyHtoD up to its last kernel (the program runs from its start,
//     and stops after kernel End) and the kernel lines of its range only;
//     the post-processor merges them (accelsim/posttraces);
//   - the stats files whole: the tracer writes a row for every launch it
//     sees, traced or not, so each run's is the same file up to End, and
//     the file kept is the full one;
//   - real_timing.json and the other files of the trace directory but
//     traces/ (metadata.json's files list, if any, rewritten to what dst
//     holds).
//
// It returns the kernel trace files written, relative to dst/traces.
func TraceLess(src, dst string, ranges []TraceRange) ([]string, error) {
	if len(ranges) == 0 {
		return nil, fmt.Errorf("tracegen: trace less: no ranges")
	}
	for _, r := range ranges {
		if r.Start < 1 || r.End < r.Start {
			return nil, fmt.Errorf("tracegen: trace less: range %d-%d: want 1 <= start <= end", r.Start, r.End)
		}
	}
	sdir, ddir := filepath.Join(src, tracedir.TracesDir), filepath.Join(dst, tracedir.TracesDir)
	ents, err := os.ReadDir(sdir)
	if err != nil {
		return nil, fmt.Errorf("tracegen: trace less: %w", err)
	}
	if err := os.MkdirAll(ddir, 0o755); err != nil {
		return nil, err
	}
	var kernels []string
	lists := 0
	for _, e := range ents {
		n := e.Name()
		switch {
		case e.IsDir() || strings.HasPrefix(n, "."):
		case n == tracedir.RawKernelList || strings.HasPrefix(n, tracedir.RawKernelListCtxPrefix):
			lists++
			ctx := kernellist.NormalizeContext(strings.TrimPrefix(n, tracedir.RawKernelListCtxPrefix))
			if n == tracedir.RawKernelList {
				ctx = ""
			}
			ks, err := traceLessLists(filepath.Join(sdir, n), filepath.Join(ddir, n), ctx, ranges)
			if err != nil {
				return nil, err
			}
			for _, k := range ks {
				if err := copyFile(filepath.Join(sdir, k), filepath.Join(ddir, k)); err != nil {
					return nil, err
				}
			}
			kernels = append(kernels, ks...)
		case n == "stats.csv" || strings.HasPrefix(n, "stats_ctx_"):
			if err := copyFile(filepath.Join(sdir, n), filepath.Join(ddir, n)); err != nil {
				return nil, err
			}
		}
	}
	if lists == 0 {
		return nil, fmt.Errorf("tracegen: trace less: %s holds no kernelslist", sdir)
	}
	if err := copyTop(src, dst); err != nil {
		return nil, err
	}
	return kernels, nil
}

// traceLessLists writes the lists of the ranges' tracer runs for one raw
// kernel list (of context ctx), out-<start>-<end>, and returns the kernel
// traces they name.
func traceLessLists(in, out, ctx string, ranges []TraceRange) ([]string, error) {
	b, err := os.ReadFile(in)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var kernels []string
	for _, r := range ranges {
		if r.Context != "" && ctx != "" && kernellist.NormalizeContext(r.Context) != ctx {
			continue
		}
		var buf bytes.Buffer
		for _, l := range lines {
			t := strings.TrimSpace(l)
			if !strings.HasPrefix(t, "kernel") {
				buf.WriteString(t + "\n") // a MemcpyHtoD: every run copies
				continue
			}
			ref, ok := kernellist.ParseTraceFileName(t)
			if !ok {
				return nil, fmt.Errorf("tracegen: trace less: %s: %q is no kernel trace name", in, t)
			}
			if ref.ID > r.End {
				break // the run stops after its last kernel
			}
			if ref.ID >= r.Start {
				buf.WriteString(t + "\n")
				kernels = append(kernels, t)
			}
		}
		if err := os.WriteFile(fmt.Sprintf("%s-%d-%d", out, r.Start, r.End), buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	return kernels, nil
}

// copyTop copies the files of src's top directory into dst, metadata.json
// with its files list (when it has one) made dst's.
func copyTop(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == tracedir.MetadataFile {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(filepath.Join(src, tracedir.MetadataFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var meta map[string]any
	if err := json.Unmarshal(b, &meta); err != nil {
		return fmt.Errorf("tracegen: trace less: %s: %w", tracedir.MetadataFile, err)
	}
	if _, ok := meta["files"]; ok {
		var files []map[string]any
		err := filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dst, p)
			files = append(files, map[string]any{"path": filepath.ToSlash(rel), "size": info.Size()})
			return nil
		})
		if err != nil {
			return err
		}
		meta["files"] = files
		if b, err = json.MarshalIndent(meta, "", "  "); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dst, tracedir.MetadataFile), b, 0o644)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	if _, err := io.Copy(w, in); err != nil {
		out.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ParseTraceList reads a sampling plan's traceList (SamplingPlan.traceList):
// a range a "DYNAMIC_KERNEL_LIMIT_START=a DYNAMIC_KERNEL_LIMIT_END=b …"
// line, of the context its comment line before names ("# context 0x…,
// launches …"). An unreadable line is an error naming it.
func ParseTraceList(text string) ([]TraceRange, error) {
	var out []TraceRange
	ctx := ""
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if c, ok := strings.CutPrefix(line, "# context "); ok {
			ctx, _, _ = strings.Cut(c, ",")
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := TraceRange{Context: ctx}
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			var err error
			switch k {
			case "DYNAMIC_KERNEL_LIMIT_START":
				r.Start, err = strconv.Atoi(v)
			case "DYNAMIC_KERNEL_LIMIT_END":
				r.End, err = strconv.Atoi(v)
			}
			if err != nil {
				return nil, fmt.Errorf("trace list line %d: %s: %w", i+1, f, err)
			}
		}
		if r.Start < 1 || r.End < r.Start {
			return nil, fmt.Errorf("trace list line %d: %q: want DYNAMIC_KERNEL_LIMIT_START=a DYNAMIC_KERNEL_LIMIT_END=b, 1 <= a <= b", i+1, line)
		}
		out = append(out, r)
		ctx = ""
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("trace list: no DYNAMIC_KERNEL_LIMIT line")
	}
	return out, nil
}
