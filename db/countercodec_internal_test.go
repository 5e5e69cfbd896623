package db

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestCounterCodec: a kernel's counters decode to the bits they were
// encoded from, whatever the values (-0, NaN, infinities, whole numbers
// past 2^53); counters given out of order come back by seq, then name;
// what was not encoded is refused.
func TestCounterCodec(t *testing.T) {
	nan := math.Float64frombits(0x7ff8000000000123)
	cs := []cascade.KernelCounter{
		{Seq: 4, Stat: "z", Mean: math.Copysign(0, -1), Min: 0, Max: math.Copysign(0, -1), Count: -3},
		{Seq: 1, Stat: "cycles", Mean: 1.5, Min: 1, Max: 2, Count: 2},
		{Seq: 4, Stat: "a", Mean: nan, Min: math.Inf(-1), Max: math.Inf(1), Count: 1},
		{Seq: 1, Stat: "a", Mean: 1 << 53, Min: 1<<53 + 2, Max: -(1 << 52), Count: math.MaxInt64},
		{Seq: 4, Stat: "cycles", Mean: 42, Min: 42, Max: 42, Count: 1},
	}
	names, idx := statNames(cs)
	if strings.Join(names, ",") != "a,cycles,z" {
		t.Fatalf("names %q", names)
	}
	order, err := counterOrder(cs, idx)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, rest := encodeKernels(nil, nil, cs, idx, order, len(cs))
	if len(rows) != 2 || len(rest) != 0 || rows[0].seq != 1 || rows[1].seq != 4 {
		t.Fatalf("rows %+v, %d left", rows, len(rest))
	}
	// Index, count, flags, 42: a counter whose measurements agreed.
	if n := len(appendKernelCounters(nil, cs, idx, []int32{4})); n != 4 {
		t.Fatalf("a counter of 42 takes %d bytes", n)
	}
	stored, err := decodeStatNames(encodeStatNames(names))
	if err != nil || strings.Join(stored, ",") != "a,cycles,z" {
		t.Fatalf("names read back %q, %v", stored, err)
	}
	var got []cascade.KernelCounter
	for _, r := range rows {
		if got, err = appendDecodedCounters(got, "t", r.seq, stored, r.counters); err != nil {
			t.Fatal(err)
		}
	}
	want := []cascade.KernelCounter{cs[3], cs[1], cs[2], cs[4], cs[0]}
	if len(got) != len(want) {
		t.Fatalf("%d counters read back", len(got))
	}
	bits := math.Float64bits
	for i, w := range want {
		g := got[i]
		if g.TraceID != "t" || g.Seq != w.Seq || g.Stat != w.Stat || g.Count != w.Count ||
			bits(g.Mean) != bits(w.Mean) || bits(g.Min) != bits(w.Min) || bits(g.Max) != bits(w.Max) {
			t.Fatalf("counter %d read back as %+v, want %+v", i, g, w)
		}
	}

	// Not encoded here: refused, never read past. A kernel's counters
	// cut short decode only when cut between two of them.
	b := rows[1].counters
	ends := map[int]bool{}
	for i := range 3 {
		ends[len(appendKernelCounters(nil, cs, idx, order[2:3+i]))] = true
	}
	for n := range len(b) {
		if _, err := appendDecodedCounters(nil, "t", 4, stored, b[:n]); (err == nil) != (n == 0 || ends[n]) {
			t.Fatalf("kernel 4's counters cut to %d bytes: %v", n, err)
		}
	}
	if _, err := appendDecodedCounters(nil, "t", 4, stored[:2], b); !errors.Is(err, errCorruptCounters) {
		t.Fatalf("an index past the names: %v", err)
	}
	if _, err := decodeStatNames([]byte{5, 'a'}); !errors.Is(err, errCorruptCounters) {
		t.Fatalf("a name past the end: %v", err)
	}

	// A statistic twice for a kernel, a negative seq: refused.
	for _, bad := range [][]cascade.KernelCounter{
		{{Seq: 1, Stat: "a"}, {Seq: 2, Stat: "a"}, {Seq: 1, Stat: "a"}},
		{{Seq: -1, Stat: "a"}},
	} {
		names, idx := statNames(bad)
		if _, err := counterOrder(bad, idx); err == nil {
			t.Fatalf("%+v (%q) accepted", bad, names)
		}
	}
}
