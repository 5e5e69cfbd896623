package cascade

import "time"

// Sweep is a set of runs launched together: every one of its traces under
// every one of its configs, one run each.
type Sweep struct {
	ID    string `gorm:"primaryKey"`
	Seq   int64  `gorm:"not null;uniqueIndex"`
	Label *string
	// TraceIDs and SimConfigs are what was asked for, in the order given;
	// a sweep over parameters lists in SimConfigs each cell of its grid,
	// a variant's name (see [SweepAxis]).
	TraceIDs   []string `gorm:"serializer:json"`
	SimConfigs []string `gorm:"serializer:json"`
	// Axes are the parameters a design sweep varies over its base
	// configs; nil for a sweep of configs alone.
	Axes []SweepAxis `gorm:"serializer:json"`
	// RunCount is len(TraceIDs) * len(SimConfigs): the runs it launched.
	RunCount  int    `gorm:"not null"`
	Executor  string `gorm:"not null;default:''"` // "local" or "slurm", as launched
	CreatedAt time.Time
}

// SweepAxis is one parameter a design sweep varies: with an Option, each
// of Values is a value of it ("-gpgpu_n_clusters": "20", "40", "80");
// without, each is a modifier of define-standard-cfgs.yml, or "" for
// none ("", "1455MHZ"). A sweep's grid is its base configs × the product
// of its axes' values.
type SweepAxis struct {
	Option string   `json:"option,omitempty"`
	Values []string `json:"values"`
}

// SweepProgress counts a sweep's runs by state. Runs removed with their
// trace are no longer counted.
type SweepProgress struct {
	Total, Queued, Running, Succeeded, Failed, Cancelled int
	// UpdatedAt is the latest UpdatedAt of the runs counted, read before
	// them, so the counts are at least that new: of two copies of a
	// sweep's progress, the one with the later UpdatedAt is the newer.
	// Nil when no run is counted.
	UpdatedAt *time.Time
}

// Done is how many of the runs are over.
func (p SweepProgress) Done() int { return p.Succeeded + p.Failed + p.Cancelled }

// Count adds n runs in state s.
func (p *SweepProgress) Count(s RunState, n int) {
	p.Total += n
	switch s {
	case RunQueued:
		p.Queued += n
	case RunRunning:
		p.Running += n
	case RunSucceeded:
		p.Succeeded += n
	case RunFailed:
		p.Failed += n
	case RunCancelled:
		p.Cancelled += n
	}
}

// SweepConfigComparison pools the succeeded runs of a sweep under one
// config: every compared kernel of all of them (see RunComparison) in one
// MAPE and one correlation, and the step times their runs project.
type SweepConfigComparison struct {
	SimConfig string
	// Runs and Succeeded count the config's runs; Compared those whose
	// trace has usable real timing.
	Runs, Succeeded, Compared int
	KernelsCompared           int
	MAPE                      *float64 // mean |ErrorPct| over the pooled kernels; nil with none
	Correlation               *float64 // Pearson over the pooled kernels; nil with < 2 or no variance
	// StepsCompared counts the projected steps (with at least one kernel
	// replaced) of runs whose trace has a step timeline; StepMAPE is the
	// mean |projected - measured| / measured of those steps, in percent.
	StepsCompared int
	StepMAPE      *float64
}
