package posttraces

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade/tracedir"
)

// traced is what the partitioning pass read of a kernel trace that its
// stats row is checked against.
type traced struct {
	insts uint64    // instruction lines
	name  string    // the header's -kernel name, "" without one
	grid  [3]uint32 // the header's -grid dim
}

// checkStats compares each kernel trace, as the partitioning pass read it,
// with its stats row, and reports in w (and the log) what contradicts it,
// in the rows' order. The stats files are those of the kernel lists
// (tracedir.StatsFor); a kernel without a readable row is not checked,
// and one two rows list against the first.
//
// Fewer instruction lines than total_reported_insts says the tracer
// wrote: a file cut at a line boundary (an upload that stopped early)
// reads as a whole one, and only this tells. More lines than reported
// are no problem: some tracer versions write an LDGSTS, or an instruction
// of several memory operands, as two. A kernel with 2^32 lines or more
// (the count is 32-bit) is not compared on them.
//
// A kernel name or grid other than the trace's header says: the kernel
// list shows the stats rows, so it would show another kernel than the
// one simulated. A header without -kernel name is compared on its grid.
func (p *processor) checkStats(lists []string, jobs []kernelJob, kernels []traced, w *tracedir.Warnings) {
	byName := make(map[string]int, len(jobs)) // trace name without .xz → jobs index
	for i, j := range jobs {
		byName[strings.TrimSuffix(filepath.Base(j.in), ".xz")] = i
	}
	warn := func(msg string) {
		p.log.Warn(msg)
		if w != nil {
			w.Addf("%s", msg)
		}
	}
	seen := map[string]bool{}
	for _, l := range lists {
		stats := tracedir.StatsFor(l)
		if seen[stats] {
			continue
		}
		seen[stats] = true
		err := tracedir.EachStatsRow(stats, func(r tracedir.StatsRow) {
			key := strings.TrimSuffix(filepath.Base(r.TraceFile), ".xz")
			i, ok := byName[key]
			if !ok {
				return
			}
			delete(byName, key) // a kernel two rows list is checked once
			k, trace := kernels[i], filepath.Base(jobs[i].in)
			if n := k.insts; r.ReportedOK && n < 1<<32 && n < uint64(r.Reported) {
				lines := " instruction lines, "
				if n == 1 {
					lines = " instruction line, "
				}
				warn(trace + ": " + thousands(n) + lines + filepath.Base(stats) +
					"'s total_reported_insts says " + thousands(uint64(r.Reported)) + ": the file may be cut short; upload it again")
			}
			grid := [3]int{int(k.grid[0]), int(k.grid[1]), int(k.grid[2])}
			if (r.Name != "" && k.name != "" && r.Name != k.name) || (r.GridOK && r.Grid != grid) {
				warn(fmt.Sprintf("%s: %s says %s, the trace's header says %s", trace, filepath.Base(stats),
					kernelSide(r.Name, r.Grid), kernelSide(k.name, grid)))
			}
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.log.Warn("stats file not read: kernel traces not checked against it", "path", stats, "err", err)
		}
	}
}

// kernelSide names a kernel and its grid, "_Z3fooPf grid (4,1,1)", or
// only its grid when it has no name.
func kernelSide(name string, grid [3]int) string {
	g := fmt.Sprintf("grid (%d,%d,%d)", grid[0], grid[1], grid[2])
	if name == "" {
		return g
	}
	return name + " " + g
}

// thousands writes n with commas between groups of three digits:
// 71,974.
func thousands(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
