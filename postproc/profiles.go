package postproc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/hwprofile"
	"github.com/cascade-sim/cascade/internal/kernelname"
	"github.com/cascade-sim/cascade/tracedir"
)

// maxUnmatchedShown is how many unmatched launches a profile's warning
// lists; it counts them all.
const maxUnmatchedShown = 5

// readProfiles reads the hardware profiles metadata.json names
// (formats.md §9) in the trace directory dir, matches their launches to
// the trace's kernels (in list order: a kernel's index is its Seq) and
// returns the counters to store (with each matched launch's duration, as
// hwprofile.DurationStat, where a profile has durations), what each
// profile gave, and warnings, each starting "profile" (profileWarning): a
// profile that is missing or malformed (its line and column) gives
// nothing and a warning, never a failed trace; launches not matched are
// named with why.
func readProfiles(dir string, names []string, kernels []hwprofile.Traced, table *hwprofile.Mapping) ([]cascade.KernelCounter, []cascade.ProfileRead, []string) {
	if table == nil {
		table = hwprofile.Builtin()
	}
	table = table.With(hwprofile.Durations())
	var tree *tracedir.Tree
	if len(names) > 0 {
		var err error
		if tree, err = tracedir.Walk(dir); err != nil {
			return nil, nil, []string{fmt.Sprintf("profiles not read: %v", err)}
		}
	}
	m := hwprofile.NewMatcher(kernels, table.Stats())
	var reads []cascade.ProfileRead
	var warnings []string
	for _, name := range names {
		read := cascade.ProfileRead{File: name, Stats: []string{}}
		if tree != nil {
			read.Sum = tree.FileSig(name)
		}
		rep, err := readProfile(dir, tree, name, m, table)
		if err != nil {
			read.Error = err.Error()
			warnings = append(warnings, fmt.Sprintf("profile %s not read: %v", name, err))
			reads = append(reads, read)
			continue
		}
		read.Profiler, read.GPU, read.CC = string(rep.Profiler), rep.GPU.Name, rep.GPU.CC
		read.Launches, read.Matched, read.Unmatched = rep.Launches, rep.Matched, rep.UnmatchedCount
		for _, st := range rep.Stats {
			if st == hwprofile.DurationStat {
				read.Durations = hwprofile.DurationColumn(rep.Profiler)
			} else {
				read.Stats = append(read.Stats, st)
			}
		}
		reads = append(reads, read)
		switch {
		case rep.Launches == 0:
			warnings = append(warnings, fmt.Sprintf("profile %s: no launches in it", name))
		case rep.Matched == 0:
			warnings = append(warnings, fmt.Sprintf("profile %s: none of its %d launches matches a traced kernel (a profile of another program?); %s", name, rep.Launches, unmatched(rep)))
		case rep.UnmatchedCount > 0:
			warnings = append(warnings, fmt.Sprintf("profile %s: %d of its %d launches match no traced kernel; %s", name, rep.UnmatchedCount, rep.Launches, unmatched(rep)))
		}
		if len(rep.Unpaired) > 0 && rep.Matched > 0 {
			warnings = append(warnings, fmt.Sprintf("profile %s: the trace has %d CUDA contexts, the profile %d (a process's context each): the trace's %s paired with none of the profile's, so %s kernels have no counters from it",
				name, rep.TraceContexts, rep.Contexts, contextList(rep.Unpaired), its(len(rep.Unpaired))))
		}
		for _, n := range rep.Notes {
			warnings = append(warnings, fmt.Sprintf("profile %s: %s", name, n))
		}
	}
	var cs []cascade.KernelCounter
	stats := m.Stats()
	for k := range kernels {
		for i, v := range m.Values(k) {
			if v.N > 0 {
				cs = append(cs, cascade.KernelCounter{Seq: k, Stat: stats[i], Mean: v.Mean(), Min: v.Min, Max: v.Max, Count: v.N})
			}
		}
	}
	return cs, reads, warnings
}

// profileWarning reports whether w is one of readProfiles' warnings,
// which a later read of the profiles replaces.
func profileWarning(w string) bool {
	return strings.HasPrefix(w, "profile ") || strings.HasPrefix(w, "profiles not read: ")
}

// appendTraced appends to ts what matching needs of each of ks.
func appendTraced(ts []hwprofile.Traced, ks []cascade.Kernel) []hwprofile.Traced {
	for _, k := range ks {
		d := k.DemangledName
		if d == "" {
			d, _ = kernelname.Demangle(k.Name)
		}
		ts = append(ts, hwprofile.Traced{Context: cascade.Deref(k.Context), ID: k.KernelID, Name: k.Name, Demangled: d})
	}
	return ts
}

// contextList names the trace's contexts: "context 0x2", "contexts 0x2,
// 0x3".
func contextList(cs []string) string {
	if len(cs) == 1 {
		return "context " + cs[0] + " is"
	}
	return "contexts " + strings.Join(cs, ", ") + " are"
}

func its(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

func unmatched(rep hwprofile.Report) string {
	s := ""
	for i, u := range rep.Unmatched {
		if i == maxUnmatchedShown {
			break
		}
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("line %d, %s: %s", u.Line, u.Kernel, u.Why)
	}
	if rep.UnmatchedCount > maxUnmatchedShown {
		s += fmt.Sprintf("; and %d more", rep.UnmatchedCount-maxUnmatchedShown)
	}
	return s
}

// readProfile checks the profile whole, then adds it to m: a malformed
// one adds nothing.
func readProfile(dir string, tree *tracedir.Tree, name string, m *hwprofile.Matcher, table *hwprofile.Mapping) (hwprofile.Report, error) {
	rel, err := tree.Resolve(name)
	if err != nil {
		return hwprofile.Report{}, err
	}
	if !tree.Has(rel) || tree.Files[rel].Link {
		return hwprofile.Report{}, errors.New("not a file of the upload")
	}
	open := func() (*hwprofile.Reader, func() error, error) {
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, nil, err
		}
		r, err := hwprofile.NewReader(f, name)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return r, f.Close, nil
	}
	r, done, err := open()
	if err != nil {
		return hwprofile.Report{}, err
	}
	var l hwprofile.Launch
	for err == nil {
		err = r.Next(&l)
	}
	done()
	if !errors.Is(err, io.EOF) {
		return hwprofile.Report{}, err
	}
	if r, done, err = open(); err != nil {
		return hwprofile.Report{}, err
	}
	defer done()
	return m.Add(r, table)
}
