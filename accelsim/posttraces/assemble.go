package posttraces

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/cascade-sim/cascade/accelsim/tracez"
)

// item is one assembled unit of a partition: a block's info, or one warp's
// instructions already encoded for the output format.
type item struct {
	key     uint64
	info    tracez.BlockHeader
	count   uint64
	payload []byte
}

// task is one partition to assemble, in output order.
type task struct {
	p      *part
	stream bool // one key too large for memory: the writer streams it
	res    chan result
}

type result struct {
	items []item
	err   error
}

// assemble writes kernel k's blocks through em in linear block order.
func (p *processor) assemble(ctx context.Context, k *kernel, em emitter, dir string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan *task, p.jobs) // with the consumer's, jobs+1 partitions in flight
	prodErr := make(chan error, 1)
	go func() {
		defer close(queue)
		prodErr <- p.produce(ctx, k, k.parts, dir, queue)
	}()

	a := &blockAssembler{k: k, em: em, cur: -1, log: p.log}
	var err error
	for t := range queue {
		if err != nil {
			if !t.stream {
				<-t.res
			}
			t.p.release()
			continue
		}
		if t.stream {
			err = a.stream(t.p, em)
		} else {
			r := <-t.res
			err = r.err
			if err == nil {
				err = a.items(r.items)
			}
		}
		t.p.release()
		if err != nil {
			cancel()
		}
	}
	if perr := <-prodErr; err == nil && perr != nil {
		err = perr
	}
	if err != nil {
		return err
	}
	return a.finish()
}

// produce queues the partitions of s in key order, splitting any that is
// too large to assemble in memory.
func (p *processor) produce(ctx context.Context, k *kernel, s *partSet, dir string, queue chan<- *task) error {
	for i, pt := range s.parts {
		if err := ctx.Err(); err != nil {
			for _, rest := range s.parts[i:] {
				rest.release()
			}
			return err
		}
		switch {
		case pt.size() == 0:
			pt.release()
		case pt.size() <= p.maxPartMem:
			t := &task{p: pt, res: make(chan result, 1)}
			queue <- t
			go func() {
				p.cpu <- struct{}{}
				r := p.assemblePart(k, pt)
				<-p.cpu
				t.res <- r
			}()
		case pt.hi-pt.lo == 1:
			queue <- &task{p: pt, stream: true}
		default:
			sub := newPartSet(dir, pt.lo, pt.hi, 16, p.bufCap(16), false)
			err := pt.scan(sub.add)
			pt.release()
			if err == nil {
				err = sub.settle()
			}
			if err == nil {
				err = p.produce(ctx, k, sub, dir, queue)
			}
			if err != nil {
				sub.release()
				for _, rest := range s.parts[i+1:] {
					rest.release()
				}
				return err
			}
		}
	}
	return nil
}

type rec struct {
	key      uint64
	off, len uint32
}

// assemblePart groups a partition's records by key (stably, so each warp
// keeps trace order), applies the LDGSTS rule and encodes each warp.
func (p *processor) assemblePart(k *kernel, pt *part) result {
	data, err := pt.load(nil)
	if err != nil {
		return result{err: err}
	}
	var recs []rec
	for off := 0; off+recHeader <= len(data); {
		n := binary.LittleEndian.Uint32(data[off+8:])
		recs = append(recs, rec{key: binary.LittleEndian.Uint64(data[off:]), off: uint32(off + recHeader), len: n})
		off += recHeader + int(n)
	}
	recs = sortRecs(recs, pt.lo, pt.hi)

	slots := k.slots()
	var (
		items   []item
		out     []byte
		scratch []byte
		lines   [][]byte
		ends    []int
	)
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].key == recs[i].key {
			j++
		}
		key := recs[i].key
		if key%slots == 0 {
			items = append(items, item{key: key, info: decodeInfo(data[recs[i].off : recs[i].off+infoSize])})
			ends = append(ends, len(out))
			i = j
			continue
		}
		lines = lines[:0]
		drop := true
		for _, r := range recs[i:j] {
			l := data[r.off : r.off+r.len]
			if isLDGSTS(l) {
				drop = !drop
				if !drop { // the pair's first line (shared-memory address) goes
					continue
				}
			}
			lines = append(lines, l)
		}
		out, scratch = p.encodeWarp(out, scratch, lines)
		items = append(items, item{key: key, count: uint64(len(lines))})
		ends = append(ends, len(out))
		i = j
	}
	start := 0
	for i := range items {
		items[i].payload = out[start:ends[i]]
		start = ends[i]
	}
	return result{items: items}
}

// sortRecs orders records by key, keeping equal keys in file order: a
// counting sort when the key range is small, a stable sort otherwise.
func sortRecs(recs []rec, lo, hi uint64) []rec {
	if span := hi - lo; span <= uint64(2*len(recs)+1024) {
		counts := make([]uint32, span+1)
		for _, r := range recs {
			counts[r.key-lo+1]++
		}
		for i := 1; i < len(counts); i++ {
			counts[i] += counts[i-1]
		}
		sorted := make([]rec, len(recs))
		for _, r := range recs {
			sorted[counts[r.key-lo]] = r
			counts[r.key-lo]++
		}
		return sorted
	}
	slices.SortStableFunc(recs, func(a, b rec) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	return recs
}

func decodeInfo(b []byte) tracez.BlockHeader {
	u := func(i int) uint32 { return binary.LittleEndian.Uint32(b[4*i:]) }
	return tracez.BlockHeader{
		TB:         [3]uint32{u(0), u(1), u(2)},
		ClusterID:  [3]uint32{u(3), u(4), u(5)},
		ClusterCTA: [3]uint32{u(6), u(7), u(8)},
		Rank:       u(9),
	}
}

// blockAssembler turns items arriving in key order into blocks: it emits
// idle warps, closes blocks and reports empty ones.
type blockAssembler struct {
	k         *kernel
	em        emitter
	cur       int64 // open block, or -1
	nextWarp  uint64
	nextBlock uint64 // first block not yet emitted or reported empty
	empty     uint64
	log       *slog.Logger
}

func (a *blockAssembler) items(items []item) error {
	for _, it := range items {
		b, slot := it.key/a.k.slots(), it.key%a.k.slots()
		if slot == 0 {
			if err := a.beginBlock(b, it.info); err != nil {
				return err
			}
			continue
		}
		if err := a.toWarp(b, slot-1); err != nil {
			return err
		}
		if err := a.em.warp(slot-1, it.count, it.payload); err != nil {
			return err
		}
		a.nextWarp = slot
	}
	return nil
}

func (a *blockAssembler) beginBlock(b uint64, h tracez.BlockHeader) error {
	if err := a.closeBlock(); err != nil {
		return err
	}
	a.skipEmpty(b)
	a.cur, a.nextWarp, a.nextBlock = int64(b), 0, b+1
	return a.em.beginBlock(h)
}

// toWarp emits idle warps of the open block up to warp w.
func (a *blockAssembler) toWarp(b, w uint64) error {
	if a.cur != int64(b) {
		return fmt.Errorf("%s: internal: instructions of block %d arrived without its info", a.k.name, b)
	}
	for ; a.nextWarp < w; a.nextWarp++ {
		if err := a.em.warp(a.nextWarp, 0, nil); err != nil {
			return err
		}
	}
	return nil
}

func (a *blockAssembler) closeBlock() error {
	if a.cur < 0 {
		return nil
	}
	if err := a.toWarp(uint64(a.cur), a.k.warps); err != nil {
		return err
	}
	a.cur = -1
	return a.em.endBlock()
}

// skipEmpty reports blocks before b that had no instruction at all.
func (a *blockAssembler) skipEmpty(b uint64) {
	for ; a.nextBlock < b; a.nextBlock++ {
		if a.empty < 5 {
			g := a.k.grid
			x, y, z := a.nextBlock%uint64(g[0]), a.nextBlock/uint64(g[0])%uint64(g[1]), a.nextBlock/(uint64(g[0])*uint64(g[1]))
			a.log.Warn("thread block is empty, skipped", "path", a.k.name, "block", fmt.Sprintf("%d,%d,%d", x, y, z))
		}
		a.empty++
	}
}

func (a *blockAssembler) finish() error {
	if err := a.closeBlock(); err != nil {
		return err
	}
	a.skipEmpty(a.k.nblocks)
	if a.empty > 5 {
		a.log.Warn("empty thread blocks skipped", "path", a.k.name, "count", a.empty)
	}
	return a.em.close()
}

// stream emits a single warp too large for memory, reading its spill file
// twice: once to count what the LDGSTS rule keeps, once to write it.
func (a *blockAssembler) stream(pt *part, em emitter) error {
	b, slot := pt.lo/a.k.slots(), pt.lo%a.k.slots()
	if slot == 0 {
		return errors.New("internal: block info record too large")
	}
	var n uint64
	drop := true
	keep := func(l []byte) bool {
		if isLDGSTS(l) {
			drop = !drop
			return drop
		}
		return true
	}
	if err := pt.scan(func(_ uint64, l []byte) error {
		if keep(l) {
			n++
		}
		return nil
	}); err != nil {
		return err
	}
	if err := a.toWarp(b, slot-1); err != nil {
		return err
	}
	if err := em.beginWarp(slot-1, n); err != nil {
		return err
	}
	drop = true
	if err := pt.scan(func(_ uint64, l []byte) error {
		if keep(l) {
			return em.line(l)
		}
		return nil
	}); err != nil {
		return err
	}
	a.nextWarp = slot
	return em.endWarp()
}
