package upload

import (
	"fmt"
	"io"
	"strings"
	"time"
)

const (
	// barThreshold is the smallest upload that gets a progress bar: below
	// it the copy is over before a bar would tell the user anything.
	barThreshold = 64 << 20
	// barInterval caps terminal redraws at about ten a second.
	barInterval = 100 * time.Millisecond
	// lineInterval spaces the plain lines written to logs and pipes, so a
	// long upload in CI leaves a readable trail, not a flood.
	lineInterval = 10 * time.Second
)

// progress reports bytes copied. It is called from the copying goroutine
// only and is not safe for concurrent use.
type progress struct {
	w        io.Writer
	terminal bool
	width    int // terminal columns
	total    int64
	done     int64
	now      func() time.Time
	interval time.Duration
	start    time.Time
	last     time.Time
	drawn    bool // a bar is on screen and needs a final newline
}

func newProgress(w io.Writer, terminal bool, width int, total int64, now func() time.Time, interval time.Duration) *progress {
	if w == nil {
		w = io.Discard
	}
	if interval <= 0 {
		interval = lineInterval
		if terminal {
			interval = barInterval
		}
	}
	if terminal && total < barThreshold {
		w = io.Discard // small: the summary line says it all
	}
	if width <= 0 {
		width = 80
	}
	t := now()
	return &progress{w: w, terminal: terminal, width: width, total: total, now: now, interval: interval, start: t, last: t}
}

// add counts n more bytes copied and redraws when the interval has passed.
func (p *progress) add(n int64) {
	p.done += n
	t := p.now()
	if t.Sub(p.last) < p.interval {
		return
	}
	p.last = t
	p.draw(t)
}

// finish draws the final state and ends the bar's line.
func (p *progress) finish() {
	if p.terminal {
		if p.drawn || p.done > 0 {
			p.draw(p.now())
		}
		if p.drawn {
			fmt.Fprintln(p.w)
		}
	}
}

func (p *progress) draw(t time.Time) {
	elapsed := t.Sub(p.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.done) / elapsed.Seconds()
	}
	left := "--"
	if rate > 0 {
		left = formatDuration(time.Duration(float64(p.total-p.done) / rate * float64(time.Second)))
	}
	pct := 100.0
	if p.total > 0 {
		pct = 100 * float64(p.done) / float64(p.total)
	}
	if !p.terminal {
		fmt.Fprintf(p.w, "upload: %s of %s (%.0f%%), %s/s, %s left\n",
			formatBytes(p.done), formatBytes(p.total), pct, formatBytes(int64(rate)), left)
		return
	}
	stats := fmt.Sprintf(" %3.0f%%  %s / %s  %s/s  %s left", pct,
		formatBytes(p.done), formatBytes(p.total), formatBytes(int64(rate)), left)
	barWidth := min(p.width-len(stats)-3, 40)
	bar := ""
	if barWidth >= 10 {
		fill := int(float64(barWidth) * pct / 100)
		bar = "[" + strings.Repeat("=", fill) + strings.Repeat(" ", barWidth-fill) + "]"
	}
	// \r returns to the line's start and \x1b[K clears what a longer
	// previous line left behind.
	fmt.Fprintf(p.w, "\r%s%s\x1b[K", bar, stats)
	p.drawn = true
}

// formatBytes spells a size in binary units: 512 B, 1.5 KiB, 12.0 GiB.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// formatDuration rounds to what a person waiting wants to know: 45s, 3m04s,
// 2h05m.
func formatDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
}
