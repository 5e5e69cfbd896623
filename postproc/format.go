package postproc

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/cascade-sim/cascade/tracedir"
)

// inFormat reports whether a kernel trace file name is in the format.
func inFormat(name, format string) bool {
	switch format {
	case FormatTracez:
		return strings.HasSuffix(name, ".tracez")
	case FormatTraceg:
		return strings.HasSuffix(name, ".traceg") || strings.HasSuffix(name, ".traceg.xz")
	}
	return true
}

// processedKernels returns the kernel trace names a kernelslist.g lists,
// relative to its directory.
func processedKernels(list string) ([]string, error) {
	f, err := os.Open(list)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "kernel") {
			names = append(names, line)
		}
	}
	return names, sc.Err()
}

// rawListed returns the processed kernel list list's first kernel trace
// when it is a raw NVBit trace (tracedir.IsRawKernel), "" when it is not,
// there is none, or the list cannot be read.
func rawListed(list string) string {
	f, err := os.Open(list)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "kernel") {
			// A list names one kind of kernel trace (staleFormat reads
			// its first too): no second pass over a million-line list,
			// which finish reads whole anyway.
			if tracedir.IsRawKernel(line) {
				return line
			}
			return ""
		}
	}
	return ""
}

// hasRawList reports whether the trace in dir holds a tracer's raw kernel
// list (tracedir.RawListContext), which a post-processor starts from.
func hasRawList(dir string) bool {
	entries, _ := os.ReadDir(filepath.Join(dir, tracedir.TracesDir))
	for _, e := range entries {
		if _, ok := tracedir.RawListContext(e.Name()); ok && e.Type().IsRegular() {
			return true
		}
	}
	return false
}

// Retried tells the processor that the trace was retried (retryTrace): if
// its processed files are in another format than the post-processor
// writes, it processes the trace again.
func (p *Processor) Retried(id string) {
	p.mu.Lock()
	p.retried[id] = true
	p.mu.Unlock()
}

func (p *Processor) takeRetried(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.retried[id]
	delete(p.retried, id)
	return r
}

// staleFormat returns the processed kernel traces of the trace in dir when
// they are in another format than the post-processor writes and the raw
// traces are there to process again; nil otherwise, and always for a
// post-processor of unknown format. It is asked only for a retried trace:
// an upload that holds its own kernelslist.g is used as it came.
func (p *Processor) staleFormat(dir string) []string {
	if p.cfg.Format == "" {
		return nil
	}
	names, err := processedKernels(filepath.Join(dir, filepath.FromSlash(tracedir.KernelsListG)))
	if err != nil || len(names) == 0 || inFormat(names[0], p.cfg.Format) {
		return nil
	}
	traces := filepath.Join(dir, tracedir.TracesDir)
	raw, _ := filepath.Glob(filepath.Join(traces, "kernel-*.trace"))
	xz, _ := filepath.Glob(filepath.Join(traces, "kernel-*.trace.xz"))
	if len(raw)+len(xz) == 0 {
		return nil
	}
	return names
}

// removeStale removes the processed kernel traces of the old format that
// the new kernelslist.g no longer names.
func (p *Processor) removeStale(dir string, old []string) {
	current, _ := processedKernels(filepath.Join(dir, filepath.FromSlash(tracedir.KernelsListG)))
	keep := map[string]bool{}
	for _, n := range current {
		keep[n] = true
	}
	traces := filepath.Join(dir, tracedir.TracesDir)
	for _, n := range old {
		if keep[n] || strings.Contains(n, "/") || strings.Contains(n, `\`) {
			continue // only files right beside the list, never a path elsewhere
		}
		os.Remove(filepath.Join(traces, n))
	}
}
