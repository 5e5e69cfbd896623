package slurmexec

import (
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/slurm"
)

// TestRecordCost: sacct's Elapsed and MaxRSS when accounting gave them,
// else the wall time from the job's start and end, and no memory.
func TestRecordCost(t *testing.T) {
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		st   slurm.Status
		wall float64
		rss  int64
	}{
		{"accounting", slurm.Status{Elapsed: 87 * time.Second, MaxRSS: 3620864, Start: start, End: start.Add(90 * time.Second)}, 87, 3620864},
		{"no accounting", slurm.Status{Start: start, End: start.Add(90 * time.Second)}, 90, 0},
		{"never started", slurm.Status{End: start}, 0, 0},
	}
	for _, tt := range tests {
		var r cascade.Run
		recordCost(&r, tt.st)
		if r.Figures.WallSeconds != tt.wall || r.Figures.PeakRSSBytes != tt.rss {
			t.Errorf("%s: WallSeconds %v, PeakRSSBytes %d; want %v, %d", tt.name, r.Figures.WallSeconds, r.Figures.PeakRSSBytes, tt.wall, tt.rss)
		}
	}
}
