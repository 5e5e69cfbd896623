// The verdict on a finished simulation: success, or how it failed (its
// class and the decisive line of the log).

package simlog

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cascade-sim/cascade"
)

// Outcome judges the run once the simulator has exited; call it after the
// last line. Success needs the exit-detected line, a clean exit and a
// complete result for every expected kernel: Accel-Sim exits 0 after an
// unsupported binary version and after its cycle limit, so the exit status
// alone proves nothing. Partial results stay available from Kernels.
func (p *Parser) Outcome(exit Exit) Outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.outcome(exit)
	p.last = &o
	return o
}

// Judged returns the Outcome last returned by [Parser.Outcome]; ok is
// false before the first call. Whoever records a run's end reads its
// failure class and decisive line here, whichever executor judged it.
func (p *Parser) Judged() (o Outcome, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		return Outcome{}, false
	}
	return *p.last, true
}

func (p *Parser) outcome(exit Exit) Outcome {
	if len(p.partial) > 0 {
		p.line(string(p.partial))
		p.partial = nil
	}
	p.commit()
	if p.stats != nil {
		p.stats.Finish()
		p.takeStats()
	}
	p.seal()

	done := p.done()
	after := fmt.Sprintf("after %d of %d kernels", done, p.expected)
	fail := func(f Failure, format string, args ...any) Outcome {
		o := Outcome{Failure: f, Reason: fmt.Sprintf(format, args...)}
		o.Class, o.Line = p.classify(f, exit)
		if p.lastProcessed != "" {
			o.File = filepath.Base(p.lastProcessed)
		}
		return o
	}
	switch {
	case p.deadlock != "":
		return fail(FailureDeadlock, "deadlock %s%s: %s", p.running(), after, p.deadlock)
	case exit.OOM || exit.TimeLimit:
		reason := fmt.Sprintf("simulator %s %s%s", exit, p.running(), after)
		if p.errLine != "" {
			reason += ": " + p.errLine
		}
		return fail(FailureCrash, "%s", reason)
	case p.unsupported != "":
		reason := fmt.Sprintf("%s%s (the simulator exits 0 after it), %s", p.unsupported, p.processing(), after)
		if strings.HasSuffix(p.unsupported, ": 0") {
			reason += "; version 0 means the trace header could not be read"
			if p.errLine != "" {
				reason += ": " + p.errLine
			}
		}
		return fail(FailureUnsupportedBinary, "%s", reason)
	case p.limitHit:
		return fail(FailureLimit, "stopped at the simulator's maximum cycles or instructions %s%s", p.running(), after)
	case strings.Contains(p.errLine, unsupportedFileType):
		return fail(FailureTraceFormat, "the simulator does not read this trace's file type: it stopped%s with %q (%s) %s", p.processing(), p.errLine, exit, after)
	case !exit.OK():
		reason := fmt.Sprintf("simulator %s %s", exit, after)
		if p.errLine != "" {
			reason += ": " + p.errLine
		}
		if exit.OOMUnknown && !exit.OOM {
			reason += "; " + oomUnknownHint
		}
		return fail(FailureCrash, "%s", reason)
	case !p.exitDetected:
		return fail(FailureNoExit, "simulator exited 0 without %q, %s", logExit, after)
	case done < p.expected:
		return fail(FailureMissingKernels, "simulator finished but reported %d of %d kernels%s", done, p.expected, p.missing())
	}
	return Outcome{Succeeded: true}
}

// oomUnknownHint ends the reason of a simulator killed by a SIGKILL
// nothing in Cascade sent, where the cgroup's OOM kill count could not be
// read to tell whether the kernel's OOM killer sent it.
const oomUnknownHint = "Cascade did not send that SIGKILL; the kernel's OOM killer is the usual sender (`journalctl -k | grep -i oom` or `dmesg` names the process), which Cascade cannot tell here: this machine's cgroup OOM count is unreadable. The run's peakRssBytes says how much memory it held"

// classify gives a failure its class and decisive line: from what the
// log says when it says why, else from how the process ended.
func (p *Parser) classify(f Failure, exit Exit) (cascade.FailureClass, string) {
	line := p.errLine
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(line, s) {
				return true
			}
		}
		return false
	}
	switch {
	case f == FailureDeadlock:
		return cascade.FailureDeadlock, p.deadlock
	case exit.OOM:
		return cascade.FailureOutOfMemory, p.orExit(line, exit)
	case exit.TimeLimit:
		return cascade.FailureTimeLimit, p.orExit(line, exit)
	case f == FailureUnsupportedBinary && strings.HasSuffix(p.unsupported, ": 0") && has("No such file or directory"):
		return cascade.FailureMissingTrace, line
	case f == FailureUnsupportedBinary:
		return cascade.FailureUnsupportedBinary, p.unsupported
	case f == FailureLimit:
		return cascade.FailureCycleLimit, logLimit
	case f == FailureTraceFormat:
		return cascade.FailureUnsupportedTrace, line
	case has("Unknown Option", "Cannot parse value"):
		return cascade.FailureBadConfig, line
	case has("std::bad_alloc", "Cannot allocate memory", "out of memory"):
		return cascade.FailureOutOfMemory, line
	case has("Assertion"):
		return cascade.FailureAssertion, line
	case strings.HasPrefix(exit.Signal, "segmentation fault") || has("Segmentation fault"):
		return cascade.FailureSegfault, p.orExit(line, exit)
	}
	return cascade.FailureOther, line
}

// orExit is the decisive line of a process a signal or a limit ended: the
// log's, or, when the log says nothing of it (a simulator killed outside a
// shell prints no "Segmentation fault"; the OOM killer's SIGKILL leaves no
// line), how it ended and in which kernel.
func (p *Parser) orExit(line string, exit Exit) string {
	if line != "" {
		return line
	}
	return strings.TrimSpace("the simulator ended with " + exit.String() + " " + p.running())
}

// running names the kernel that was running: the last launched one without a
// complete result.
func (p *Parser) running() string {
	for i := len(p.launched) - 1; i >= 0; i-- {
		uid := p.launched[i]
		if p.complete(uid) {
			continue
		}
		s := fmt.Sprintf("in kernel uid %d", uid)
		if j := uid - 1 - p.procBase; uid >= 1 && j >= 0 && j < len(p.processed) {
			s += " (" + filepath.Base(p.processed[j]) + ")"
		}
		return s + " "
	}
	return ""
}

// processing names the last trace the simulator began to read.
func (p *Parser) processing() string {
	if p.procBase+len(p.processed) == 0 {
		return ""
	}
	return " in " + filepath.Base(p.lastProcessed)
}

// missing lists up to five processed traces that have no result.
func (p *Parser) missing() string {
	var names []string
	for i, path := range p.processed { // those before hold results
		if !p.hasResult(p.procBase + i + 1) {
			names = append(names, filepath.Base(path))
		}
	}
	if len(names) == 0 {
		return ""
	}
	more := ""
	if len(names) > 5 {
		more = fmt.Sprintf(" and %d more", len(names)-5)
		names = names[:5]
	}
	return "; missing: " + strings.Join(names, ", ") + more
}
