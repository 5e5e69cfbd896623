package db

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cascade-sim/cascade"
)

// A trace's kernel counters are stored one row a kernel (table
// kernel_counter_values), its counters encoded in one blob, with the
// names of the trace's statistics stored once (trace_counter_stats), in
// byte order: a blob names each statistic by its index among them.
//
// The names are, each, its length as a uvarint, then its bytes.
//
// A kernel's blob holds its counters in the order of their statistics'
// indexes, each as
//
//	uvarint  the statistic's index among the trace's names
//	varint   Count
//	byte     flags: which of Min and Max are Mean's bits (and so left
//	         out), which values are whole numbers
//	Mean, then Min and Max unless left out: each a varint when it is a
//	         whole number (as most counters are), else the 8 bytes of
//	         its float64, little-endian
//
// Counters whose measurements agreed (a single profile) take about five
// bytes; the row a counter took before, about fifty, and an index entry.
const (
	cntMinIsMean = 1 << iota
	cntMaxIsMean
	cntMeanWhole
	cntMinWhole
	cntMaxWhole
	cntFlags = 1<<iota - 1
)

// errCorruptCounters is returned for stored counters this package did
// not write.
var errCorruptCounters = errors.New("db: corrupt stored kernel counters")

// encodeStatNames encodes a trace's statistic names.
func encodeStatNames(names []string) []byte {
	var b []byte
	for _, n := range names {
		b = binary.AppendUvarint(b, uint64(len(n)))
		b = append(b, n...)
	}
	return b
}

// decodeStatNames reads what encodeStatNames wrote.
func decodeStatNames(b []byte) ([]string, error) {
	names := []string{}
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, errCorruptCounters
		}
		names = append(names, string(b[k:k+int(n)]))
		b = b[k+int(n):]
	}
	return names, nil
}

// whole says whether f is stored as a varint: a whole number that one
// holds exactly, and not -0, whose sign a varint would lose.
func whole(f float64) bool {
	return f == math.Trunc(f) && math.Abs(f) < 1<<53 && !(f == 0 && math.Signbit(f))
}

func appendCounterValue(dst []byte, f float64, isWhole bool) []byte {
	if isWhole {
		return binary.AppendVarint(dst, int64(f))
	}
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

// appendKernelCounters appends the encoding of one kernel's counters,
// cs[at[i]] of the statistic of index idx[at[i]], the indexes ascending.
func appendKernelCounters(dst []byte, cs []cascade.KernelCounter, idx []int32, at []int32) []byte {
	for _, p := range at {
		c := &cs[p]
		mean := math.Float64bits(c.Mean)
		var flags byte
		if math.Float64bits(c.Min) == mean {
			flags |= cntMinIsMean
		}
		if math.Float64bits(c.Max) == mean {
			flags |= cntMaxIsMean
		}
		if whole(c.Mean) {
			flags |= cntMeanWhole
		}
		if whole(c.Min) {
			flags |= cntMinWhole
		}
		if whole(c.Max) {
			flags |= cntMaxWhole
		}
		dst = binary.AppendUvarint(dst, uint64(idx[p]))
		dst = binary.AppendVarint(dst, int64(c.Count))
		dst = append(dst, flags)
		dst = appendCounterValue(dst, c.Mean, flags&cntMeanWhole != 0)
		if flags&cntMinIsMean == 0 {
			dst = appendCounterValue(dst, c.Min, flags&cntMinWhole != 0)
		}
		if flags&cntMaxIsMean == 0 {
			dst = appendCounterValue(dst, c.Max, flags&cntMaxWhole != 0)
		}
	}
	return dst
}

func readCounterValue(b []byte, isWhole bool) (float64, []byte, bool) {
	if isWhole {
		v, k := binary.Varint(b)
		if k <= 0 {
			return 0, nil, false
		}
		return float64(v), b[k:], true
	}
	if len(b) < 8 {
		return 0, nil, false
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], true
}

// appendDecodedCounters appends to dst the counters of the trace's kernel
// seq that appendKernelCounters encoded as b, names being the trace's
// statistic names.
func appendDecodedCounters(dst []cascade.KernelCounter, traceID string, seq int, names []string, b []byte) ([]cascade.KernelCounter, error) {
	prev := -1
	for len(b) > 0 {
		i, k := binary.Uvarint(b)
		if k <= 0 || i >= uint64(len(names)) || int(i) <= prev {
			return dst, errCorruptCounters
		}
		b = b[k:]
		n, k := binary.Varint(b)
		if k <= 0 || len(b) == k {
			return dst, errCorruptCounters
		}
		flags := b[k]
		b = b[k+1:]
		if flags&^cntFlags != 0 {
			return dst, errCorruptCounters
		}
		c := cascade.KernelCounter{TraceID: traceID, Seq: seq, Stat: names[i], Count: int(n)}
		ok := true
		if c.Mean, b, ok = readCounterValue(b, flags&cntMeanWhole != 0); !ok {
			return dst, errCorruptCounters
		}
		c.Min, c.Max = c.Mean, c.Mean
		if flags&cntMinIsMean == 0 {
			if c.Min, b, ok = readCounterValue(b, flags&cntMinWhole != 0); !ok {
				return dst, errCorruptCounters
			}
		}
		if flags&cntMaxIsMean == 0 {
			if c.Max, b, ok = readCounterValue(b, flags&cntMaxWhole != 0); !ok {
				return dst, errCorruptCounters
			}
		}
		dst = append(dst, c)
		prev = int(i)
	}
	return dst, nil
}

// counterRow is one kernel's stored counters.
type counterRow struct {
	seq      int
	counters []byte
	end      int // of counters in the buffer encodeKernels fills
}

// encodeKernels encodes the counters of the first kernels of order (as
// counterOrder gave it), whole kernels, about limit counters (at least
// one kernel's), as rows of buf's memory, reusing rows and buf. It
// returns them, and the order of the kernels left.
func encodeKernels(buf []byte, rows []counterRow, cs []cascade.KernelCounter, idx, order []int32, limit int) ([]byte, []counterRow, []int32) {
	buf, rows = buf[:0], rows[:0]
	n := 0
	for n < len(order) && n < limit {
		hi := n + 1
		for hi < len(order) && cs[order[hi]].Seq == cs[order[n]].Seq {
			hi++
		}
		buf = appendKernelCounters(buf, cs, idx, order[n:hi])
		rows = append(rows, counterRow{seq: cs[order[n]].Seq, end: len(buf)})
		n = hi
	}
	start := 0
	for i := range rows {
		rows[i].counters, start = buf[start:rows[i].end:rows[i].end], rows[i].end
	}
	return buf, rows, order[n:]
}

// statNames returns the distinct statistics of cs in byte order, and the
// index among them of each counter's.
func statNames(cs []cascade.KernelCounter) (names []string, idx []int32) {
	at := map[string]int32{}
	idx = make([]int32, len(cs))
	for i := range cs {
		j, ok := at[cs[i].Stat]
		if !ok {
			j = int32(len(names))
			at[cs[i].Stat] = j
			names = append(names, cs[i].Stat)
		}
		idx[i] = j
	}
	if slices.IsSorted(names) {
		return names, idx
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	rank := make([]int32, len(names))
	for r, s := range sorted {
		rank[at[s]] = int32(r)
	}
	for i := range idx {
		idx[i] = rank[idx[i]]
	}
	return sorted, idx
}

// counterOrder returns the positions of cs by seq, then statistic index
// (idx); a kernel given a statistic twice, or a negative seq (which
// KernelCounters' read takes for the statistic names'), is an error.
func counterOrder(cs []cascade.KernelCounter, idx []int32) ([]int32, error) {
	order := make([]int32, len(cs))
	for i := range order {
		order[i] = int32(i)
	}
	bySeq := func(a, b int32) int { return cmp.Compare(cs[a].Seq, cs[b].Seq) }
	if !slices.IsSortedFunc(order, bySeq) {
		slices.SortStableFunc(order, bySeq)
	}
	if len(order) > 0 && cs[order[0]].Seq < 0 {
		return nil, fmt.Errorf("kernel %d: a kernel's position is not negative", cs[order[0]].Seq)
	}
	byStat := func(a, b int32) int { return cmp.Compare(idx[a], idx[b]) }
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && cs[order[hi]].Seq == cs[order[lo]].Seq {
			hi++
		}
		k := order[lo:hi]
		if !slices.IsSortedFunc(k, byStat) {
			slices.SortFunc(k, byStat)
		}
		for i := 1; i < len(k); i++ {
			if idx[k[i]] == idx[k[i-1]] {
				return nil, fmt.Errorf("kernel %d has two counters of %s", cs[k[i]].Seq, cs[k[i]].Stat)
			}
		}
		lo = hi
	}
	return order, nil
}
