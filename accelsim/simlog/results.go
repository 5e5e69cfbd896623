// How results leave the parser: final ones in launch order, a chunk at a
// time, so that nothing holds a whole run's results.

package simlog

import (
	"slices"
	"sort"

	"github.com/cascade-sim/cascade"
)

// seal moves the results that became final to out, in launch order, and
// drops what the parser kept for their kernels. The result of uid next is
// final once
//   - it has its statistics (when the parser reads them): a block's
//     statistics are given when the next block starts;
//   - another kernel was launched after it: the cycle limit marks the last
//     launched kernel's result truncated (limit), and a truncated result
//     waits for the end;
//
// and results leave in uid order, so one that finished before a kernel
// launched earlier waits for it. In a log as Accel-Sim prints it, that
// keeps a result or two (a few more with concurrent kernels) in the parser;
// a kernel that never gets a result keeps every later one until the end
// (TakeAll). Results without a launch uid always wait for the end.
func (p *Parser) seal() {
	moved := false
	for !p.keepAll {
		i, ok := p.byUID[p.next]
		if !ok {
			break
		}
		r := &p.results[i]
		if r.Truncated || (p.stats != nil && r.Stats == nil) || p.next == p.lastLaunched {
			break
		}
		if !p.warm[p.next] {
			p.out = append(p.out, *r)
		}
		delete(p.byUID, p.next)
		delete(p.names, p.next)
		p.next++
		moved = true
	}
	if !moved {
		return
	}
	// Drop the sealed results, and what the kernels below next needed.
	kept := p.results[:0]
	for _, r := range p.results {
		if r.LaunchUID < 1 || r.LaunchUID >= p.next {
			kept = append(kept, r)
		}
	}
	clear(p.results[len(kept):])
	p.results = kept
	for i, r := range p.results {
		if r.LaunchUID != 0 {
			p.byUID[r.LaunchUID] = i
		}
	}
	n := 0
	for n < len(p.launched) && p.taken(p.launched[n]) {
		n++
	}
	p.launched = shrink(p.launched, n)
	n = min(p.next-1-p.procBase, len(p.processed))
	p.processed = shrink(p.processed, n)
	p.procBase += n
}

// shrink drops the first n of s. The backing array stays until an append
// outgrows it, and a copy then holds only what is left: s's memory follows
// what it holds, not what it ever held.
func shrink[T any](s []T, n int) []T {
	if n <= 0 {
		return s
	}
	clear(s[:n])
	return s[n:]
}

// Take returns the results that became final since the last Take, in
// launch order, and forgets them: a follower stores them and asks again.
// Each result is given once, by Take or by [Parser.TakeAll]. Each has
// what the log says: its launch uid, name, trace file, the kernel id and
// context its trace file's name gives, cycles, instructions, IPC, its
// statistics when [Parser.ReadStats] was called; RunID and Seq are left to
// the store.
func (p *Parser) Take() []cascade.RunKernel {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.out
	p.out = nil
	return out
}

// TakeAll returns every result not taken yet, final or not, in launch
// order (by launch uid, which follows the kernel list, whatever order
// concurrent kernels finished in; results without a uid last), and
// forgets them: the rest of a run whose log ended ([Parser.Outcome]) or
// was cut short. Lines read after it may still give results.
func (p *Parser) TakeAll() []cascade.RunKernel {
	p.mu.Lock()
	defer p.mu.Unlock()
	ks := p.all()
	for _, r := range p.results {
		if r.LaunchUID != 0 {
			p.gone[r.LaunchUID] = r.Truncated
		}
	}
	p.out, p.results = nil, nil
	clear(p.byUID)
	return ks
}

// Kernels returns the results not taken yet, final or not, in the order
// [Parser.TakeAll] gives them, without taking them: of a parser never
// taken from, every result so far.
func (p *Parser) Kernels() []cascade.RunKernel {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.all()
}

// all is out, then the results not final yet in launch order, less
// those of warming kernels.
func (p *Parser) all() []cascade.RunKernel {
	ks := slices.Concat(p.out, p.results)
	rest := slices.DeleteFunc(ks[len(p.out):], func(r cascade.RunKernel) bool { return r.LaunchUID != 0 && p.warm[r.LaunchUID] })
	ks = ks[:len(p.out)+len(rest)]
	sort.SliceStable(rest, func(i, j int) bool {
		a, b := rest[i].LaunchUID, rest[j].LaunchUID
		return a != 0 && (b == 0 || a < b) // unknown uids last
	})
	return ks
}
