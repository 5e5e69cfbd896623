package results_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strconv"
	"testing"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/results"
)

// TestSampledKernelsCSVJoinsFullRun: a succeeded sampled run's kernels CSV,
// written three kernels a page, says of every launch whether it was
// simulated or projected and from which launch, and, once a full run of
// its trace and config has succeeded, that run's cycles of the launch and
// the error against them, as its page does. The full run's kernels are
// read a page alongside each page of the sampled run's, never whole.
// Without a full run those two columns are empty.
func TestSampledKernelsCSVJoinsFullRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 10
	s := &memStore{traces: map[string]cascade.Trace{"t1": {ID: "t1", State: cascade.TraceReady, KernelCount: n}},
		kernels: map[string][]cascade.RunKernel{}}
	sampled := cascade.Run{ID: "sampled", TraceID: "t1", SimConfig: "A", State: cascade.RunSucceeded, Seq: 2,
		Sampling: &cascade.SampledRun{ProjectedCycles: cascade.Ptr(11000.0)}}
	reps := map[int]bool{0: true, 6: true}
	for i := range n {
		k := cascade.RunKernel{RunID: sampled.ID, Seq: i, KernelID: cascade.Ptr(i + 1), Name: "k", SimCycles: int64(1100 + i)}
		k.Simulated = cascade.Ptr(reps[i])
		if !reps[i] {
			k.ProjectedFrom = cascade.Ptr(6 * (i / 6))
		}
		s.kernels[sampled.ID] = append(s.kernels[sampled.ID], k)
	}
	s.runs = []cascade.Run{sampled}
	rd := results.New(results.Config{Store: s})
	write := func() [][]string {
		t.Helper()
		var b bytes.Buffer
		if err := rd.WriteKernelsCSV(ctx, &b, sampled, 3); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != n+1 {
			t.Fatalf("%d rows, want a header and %d kernels", len(rows), n)
		}
		return rows
	}
	check := func(rows [][]string, full bool) {
		t.Helper()
		col := func(name string) int {
			i := slices.Index(rows[0], name)
			if i < 0 {
				t.Fatalf("no column %s in %v", name, rows[0])
			}
			return i
		}
		for i, row := range rows[1:] {
			from := ""
			if !reps[i] {
				from = strconv.Itoa(6 * (i / 6))
			}
			fc, fe := "", ""
			if full {
				fc = strconv.Itoa(1000 + i)
				fe = strconv.FormatFloat(100*float64(100)/float64(1000+i), 'f', -1, 64)
			}
			if row[col("seq")] != strconv.Itoa(i) || row[col("simulated")] != strconv.FormatBool(reps[i]) || row[col("projected_from")] != from ||
				row[col("full_cycles")] != fc || row[col("full_error_pct")] != fe {
				t.Errorf("row %d: %v, want simulated %v, projected from %q, full cycles %q, error %q", i, row, reps[i], from, fc, fe)
			}
		}
	}
	check(write(), false)

	full := cascade.Run{ID: "full", TraceID: "t1", SimConfig: "A", State: cascade.RunSucceeded, Seq: 1}
	for i := range n {
		s.kernels[full.ID] = append(s.kernels[full.ID], cascade.RunKernel{RunID: full.ID, Seq: i, KernelID: cascade.Ptr(i + 1), Name: "k", SimCycles: int64(1000 + i)})
	}
	other := cascade.Run{ID: "other", TraceID: "t1", SimConfig: "B", State: cascade.RunSucceeded, Seq: 0}
	s.runs = append(s.runs, full, other)
	s.pages, s.wholes, s.maxFirst = 0, 0, 0
	check(write(), true)
	if s.wholes != 0 || s.maxFirst != 3 {
		t.Errorf("read %d runs' kernels whole, pages of up to %d: want none, and pages of 3", s.wholes, s.maxFirst)
	}
	// Four pages of the sampled run's (the last one short) and four of the full run's.
	if s.pages != 8 {
		t.Errorf("%d pages read, want 8", s.pages)
	}
}
