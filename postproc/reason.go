package postproc

import (
	"strings"

	"github.com/cascade-sim/cascade/internal/proc"
)

// Why a post-processor failed, as the trace's error says it.

// memoryHint says, after a post-processor's "killed by signal: killed",
// whether the kernel's OOM killer sent that SIGKILL, or that Cascade could
// not tell; "" for any other end.
func memoryHint(res proc.Result) string {
	switch {
	case res.OOMKilled:
		return " (out of memory: the kernel's OOM killer; fewer at once, CASCADE_POSTPROCESS_CONCURRENCY and CASCADE_POSTPROCESS_JOBS, take less)"
	case res.OOMUnknown:
		return " (not by Cascade; the kernel's OOM killer is the usual sender, which this machine's unreadable cgroup OOM count cannot confirm: `journalctl -k | grep -i oom`)"
	}
	return ""
}

// reason is why a post-processor failed: the last 5 lines of its log, as
// the Traces guide says; for the built-in one, whose last line is its
// error ("postprocess: no space left on device writing
// traces/kernel-3.tracez", see ErrorPrefix) naming the file and line,
// that line first, then the lines before it.
func (p *Processor) reason(logPath string) string {
	lines, err := proc.LastLines(logPath, 5)
	if err != nil || len(lines) == 0 {
		return "(no output)"
	}
	if p.cfg.Format != "" {
		if r, ok := strings.CutPrefix(lines[len(lines)-1], ErrorPrefix); ok {
			return strings.Join(append([]string{r}, lines[:len(lines)-1]...), "\n")
		}
	}
	return strings.Join(lines, "\n")
}

func (p *Processor) tail(logPath string) string {
	lines, err := proc.LastLines(logPath, 5)
	if err != nil || len(lines) == 0 {
		return "(no output)"
	}
	return strings.Join(lines, "\n")
}
