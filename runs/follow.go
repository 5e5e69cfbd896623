package runs

import (
	"context"
	"sync"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/internal/proc"
)

// Follower follows the growing log of a run's job (see [Host.Follow]).
// Its methods may be called from several goroutines.
type Follower interface {
	// Grew reads what was written to the log since the last read,
	// publishes that the log grew, and records the progress and
	// per-kernel results when they changed.
	Grew()
	// Finish reads what is left of the log, a last line without its
	// newline too, and returns the parser: the job's results and outcome.
	Finish() *simlog.Parser
}

// follower is the Manager's Follower: it feeds the log to a parser and
// records progress as it changes.
type follower struct {
	m      *Manager
	ctx    context.Context
	id     string
	mu     sync.Mutex
	tail   proc.Tail
	parser *simlog.Parser
	last   simlog.Progress
}

func newFollower(m *Manager, ctx context.Context, id, log string, total int) *follower {
	return &follower{m: m, ctx: ctx, id: id, tail: proc.Tail{Path: log, FromStart: true}, parser: simlog.NewParser(total).ReadStats(m.cfg.StatsTable), last: simlog.Progress{Total: total}}
}

// read feeds the parser every line written since the last read: the
// tail gives at most 1 MiB a call, and a batch job's log may have grown by
// more (or be read for the first time after a restart). The results each
// megabyte made final are stored before the next is read, so that a log
// read whole holds no more of them than a progress update does. It
// reports whether there were lines, and how many results it stored.
func (f *follower) read() (any bool, stored int) {
	for {
		lines, _ := f.tail.Next()
		if len(lines) == 0 {
			return any, stored
		}
		for _, l := range lines {
			f.parser.Line(l)
		}
		any = true
		n, err := f.m.kernels.save(f.ctx, f.id, f.parser.Take)
		if err != nil {
			f.m.log.Error("save run kernels", "run", f.id, "err", err)
		}
		stored += n
	}
}

// Grew implements [Follower].
func (f *follower) Grew() {
	f.mu.Lock()
	defer f.mu.Unlock()
	any, stored := f.read()
	if !any {
		return
	}
	f.m.cfg.Events.Publish(cascade.LogGrew{Kind: "run", ID: f.id})
	// A kernel's result is final when the next kernel launches, which
	// changes no count of finished kernels: results stored count as a
	// change, so the run page's kernels follow.
	if p := f.parser.Progress(); p != f.last || stored > 0 {
		f.last = p
		f.m.progress(f.ctx, f.id, f.parser.Take, p, stored > 0)
	}
}

// Finish implements [Follower].
func (f *follower) Finish() *simlog.Parser {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read()
	if rest := f.tail.Rest(); rest != "" {
		f.parser.Line(rest) // a last line without its newline
	}
	return f.parser
}
