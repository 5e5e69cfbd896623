package runs

import (
	"context"
	"sync"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simlog"
	"github.com/cascade-sim/cascade/internal/proc"
)

// Follower feeds the growing log of a run's job to a parser and records
// the progress and per-kernel results it shows as they change (see
// [Host.Follow]). Its methods may be called from several goroutines.
type Follower struct {
	m      *Manager
	ctx    context.Context
	id     string
	mu     sync.Mutex
	tail   proc.Tail
	parser *simlog.Parser
	last   simlog.Progress
}

func newFollower(m *Manager, ctx context.Context, id, log string, total int) *Follower {
	return &Follower{m: m, ctx: ctx, id: id, tail: proc.Tail{Path: log, FromStart: true}, parser: simlog.NewParser(total), last: simlog.Progress{Total: total}}
}

// read feeds the parser every line written since the last read: the
// tail gives at most 1 MiB a call, and a batch job's log may have grown by
// more (or be read for the first time after a restart).
func (f *Follower) read() bool {
	any := false
	for {
		lines, _ := f.tail.Next()
		if len(lines) == 0 {
			return any
		}
		for _, l := range lines {
			f.parser.Line(l)
		}
		any = true
	}
}

// Grew reads what was written to the log since the last read, publishes
// that the log grew, and records the progress when it changed.
func (f *Follower) Grew() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.read() {
		return
	}
	f.m.cfg.Events.Publish(cascade.LogGrew{Kind: "run", ID: f.id})
	if p := f.parser.Progress(); p != f.last {
		f.last = p
		f.m.progress(f.ctx, f.id, f.parser.Kernels(), p)
	}
}

// Finish reads what is left of the log, a last line without its newline
// too, and returns the parser: the job's results and outcome.
func (f *Follower) Finish() *simlog.Parser {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read()
	if rest := f.tail.Rest(); rest != "" {
		f.parser.Line(rest) // a last line without its newline
	}
	return f.parser
}
