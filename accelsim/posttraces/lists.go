package posttraces

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/tracedir"
)

// kernelList is one raw kernel list and what it becomes.
type kernelList struct {
	path  string
	lines []string // the .g list's lines
}

// tempRe is the name of a temporary output file (os.CreateTemp of
// "."+name+".tmp-*", in writeOutput and the lists' writer).
var tempRe = regexp.MustCompile(`^\..+\.tmp-[0-9]+$`)

// kernelJob is one raw trace to post-process.
type kernelJob struct{ in, out string }

// Run post-processes target: a traces directory (every kernelslist and
// kernelslist_ctx_* in it) or one kernel list file. See the package doc for
// which files it writes.
func Run(ctx context.Context, target string, opts Options) error {
	p, err := newProcessor(opts)
	if err != nil {
		return err
	}
	st, err := os.Stat(target)
	if err != nil {
		return err // an *fs.PathError: it names target once
	}
	dir, paths := target, []string(nil)
	if st.IsDir() {
		if paths, err = findLists(target); err != nil {
			return err
		}
	} else {
		dir, paths = filepath.Dir(target), []string{target}
	}

	// A .g left by an earlier run would claim "ready" for outputs about to
	// be rewritten: remove them first, kernelslist.g before the others.
	var stale []string
	if st.IsDir() {
		stale = append(stale, filepath.Join(dir, kernellist.Name))
	}
	for _, path := range paths {
		stale = append(stale, path+".g")
	}
	// And the temporary files of a run that was killed (out of memory,
	// its server killed) before it could remove them: a kernel's size
	// each, never seen by a scan (dotfiles). One post-processor of a
	// trace runs at a time, so none is another's.
	temps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	for _, t := range temps {
		if tempRe.MatchString(filepath.Base(t)) {
			stale = append(stale, t)
		}
	}
	for _, s := range stale {
		if err := os.Remove(s); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove stale %s: %w", s, err)
		}
	}
	var (
		lists   []*kernelList
		jobs    []kernelJob
		seen    = map[string]bool{}
		outputs = map[string]string{} // output path → its input
	)
	for _, path := range paths {
		l, js, err := readList(path, dir, p.text)
		if err != nil {
			return err
		}
		lists = append(lists, l)
		for _, j := range js {
			if prev, ok := outputs[j.out]; ok && prev != j.in {
				return fmt.Errorf("%s: %s and %s would both be written to %s", path, filepath.Base(prev), filepath.Base(j.in), filepath.Base(j.out))
			}
			outputs[j.out] = j.in
			if !seen[j.in] {
				seen[j.in] = true
				jobs = append(jobs, j)
			}
		}
	}
	if st.IsDir() {
		var merged []string
		if lists, merged, err = mergeRuns(dir, lists); err != nil {
			return err
		}
		for _, m := range merged {
			if err := os.Remove(m); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("remove stale %s: %w", m, err)
			}
		}
	}
	kernels, err := p.runJobs(ctx, jobs)
	if err != nil {
		p.removeWritten()
		return err
	}
	if err := writeLists(dir, lists, st.IsDir()); err != nil {
		p.removeWritten()
		for _, l := range lists {
			os.Remove(l.path + ".g")
		}
		return err
	}
	p.checkStats(paths, jobs, kernels, opts.Warnings)
	return nil
}

// findLists returns the raw kernel lists of dir: kernelslist first, then
// kernelslist_ctx_0x<hex> in increasing numeric context order. A dir with
// none whose traces/ subfolder has some is a trace's folder given in place
// of its traces/, which the error says.
func findLists(dir string) ([]string, error) {
	names, err := rawLists(dir)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		sub := filepath.Join(dir, "traces")
		if in, _ := rawLists(sub); len(in) > 0 {
			return nil, fmt.Errorf("%s: no kernelslist or kernelslist_ctx_* file; it has a traces folder that does: give %s", dir, sub)
		}
		return nil, fmt.Errorf("%s: no kernelslist or kernelslist_ctx_* file", dir)
	}
	slices.SortFunc(names, compareLists)
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(dir, n)
	}
	return paths, nil
}

// rawLists returns the names of dir's raw kernel lists, in no order.
func rawLists(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".g") {
			continue
		}
		if _, ok := tracedir.RawListContext(n); ok {
			names = append(names, n)
		}
	}
	return names, nil
}

// compareLists orders kernelslist before every context list, and context
// lists by their numeric context handle, then by name.
func compareLists(a, b string) int {
	ctx := func(n string) (uint64, bool) {
		if n == tracedir.RawKernelList {
			return 0, false
		}
		h := strings.TrimPrefix(strings.TrimPrefix(n, tracedir.RawKernelListCtxPrefix), "0x")
		v, err := strconv.ParseUint(h, 16, 64)
		return v, err == nil
	}
	if a == tracedir.RawKernelList || b == tracedir.RawKernelList {
		return boolCmp(b == tracedir.RawKernelList, a == tracedir.RawKernelList)
	}
	va, oka := ctx(a)
	vb, okb := ctx(b)
	if oka && okb && va != vb {
		if va < vb {
			return -1
		}
		return 1
	}
	if oka != okb {
		return boolCmp(okb, oka) // parsable handles first
	}
	return strings.Compare(a, b)
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// readList parses a raw kernel list: MemcpyHtoD lines are kept, kernel
// lines mapped to their output names; a kernel naming a missing file or
// any other line is an error naming the list file and line.
func readList(path, dir string, text bool) (*kernelList, []kernelJob, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	l := &kernelList{path: path}
	var jobs []kernelJob
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	n := 1
	for ; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
		case strings.HasPrefix(line, "Memcpy"):
			if strings.HasPrefix(line, "MemcpyHtoD") {
				if err := kernellist.CheckMemcpy(line); err != nil {
					return nil, nil, fmt.Errorf("%s:%d: %w", path, n, err)
				}
			}
			l.lines = append(l.lines, line)
		case strings.HasPrefix(line, "kernel"):
			if !filepath.IsLocal(line) {
				return nil, nil, fmt.Errorf("%s:%d: kernel trace %s is outside the list's directory", path, n, line)
			}
			if err := kernellist.CheckTraceName(line); err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
			out, err := outputName(line, text)
			if err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
			in := filepath.Join(dir, line)
			if _, err := os.Stat(in); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return nil, nil, fmt.Errorf("%s:%d: kernel trace %s: no such file", path, n, line)
				}
				return nil, nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
			jobs = append(jobs, kernelJob{in: in, out: filepath.Join(dir, out)})
			l.lines = append(l.lines, out)
		default:
			return nil, nil, fmt.Errorf("%s:%d: undefined command %q (want MemcpyHtoD,… or a kernel trace name)", path, n, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s:%d: %w", path, n, err)
	}
	return l, jobs, nil
}

// runJobs post-processes kernels, p.jobs at a time, and returns what each
// one's pass read of its trace; the first error cancels the rest.
func (p *processor) runJobs(ctx context.Context, jobs []kernelJob) ([]traced, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		first   error
		wg      sync.WaitGroup
		next    = make(chan int)
		kernels = make([]traced, len(jobs))
	)
	for range min(p.jobs, max(len(jobs), 1)) {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					continue
				}
				j := jobs[i]
				p.log.Info("processing kernel trace", "path", j.in)
				k, err := p.processKernel(ctx, j.in, j.out)
				kernels[i] = k
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					cancel()
				}
			}
		})
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return kernels, ctx.Err()
}

// writeLists writes each list's .g and, in directory mode, kernelslist.g
// last: the concatenation of all lists in findLists order.
func writeLists(dir string, lists []*kernelList, dirMode bool) error {
	var all []string
	var main *kernelList
	for _, l := range lists {
		all = append(all, l.lines...)
		if filepath.Base(l.path) == tracedir.RawKernelList {
			main = l
			continue
		}
		if err := writeAtomic(l.path+".g", l.lines); err != nil {
			return err
		}
	}
	switch {
	case main != nil && !dirMode:
		return writeAtomic(main.path+".g", main.lines)
	case dirMode:
		return writeAtomic(filepath.Join(dir, kernellist.Name), all)
	}
	return nil
}

// writeAtomic writes lines to path through a temporary dotfile and rename.
func writeAtomic(path string, lines []string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	f.Chmod(0o644)
	w := bufio.NewWriter(f)
	for _, l := range lines {
		w.WriteString(l)
		w.WriteByte('\n')
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		if errno := noRoom(err); errno != 0 {
			return &FullError{Errno: errno, What: traceRel(path), Err: err}
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
