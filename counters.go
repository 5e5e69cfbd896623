package cascade

// KernelCounter is one statistic of one traced kernel as the trace's
// hardware profiles measured it (metadata.json profiles, formats.md §9):
// the mean of Count measurements (profiles, or passes of a profile over
// the program's launches), with their spread, as Accel-Sim's correlator
// draws its error bars. Stat is a simulator statistic's name (package
// accelsim/simstats), paired with a counter by accelsim/hwprofile's table.
type KernelCounter struct {
	TraceID string  `gorm:"primaryKey"`
	Seq     int     `gorm:"primaryKey;autoIncrement:false"` // the kernel's position in the trace's list
	Stat    string  `gorm:"primaryKey"`
	Mean    float64 `gorm:"not null"`
	Min     float64 `gorm:"not null"`
	Max     float64 `gorm:"not null"`
	Count   int     `gorm:"not null"`
}

// ProfileRead is one hardware profile a trace's metadata.json named, as it
// was last read: when the trace became ready, or when the profile (or
// metadata.json's profiles) changed in the ready trace.
type ProfileRead struct {
	File     string `json:"file"`
	Profiler string `json:"profiler,omitempty"` // "ncu" or "nvprof"
	GPU      string `json:"gpu,omitempty"`      // as the profile names it
	// Launches is how many profiled launches it holds, Matched how many
	// were matched to traced kernels, Unmatched the others.
	Launches  int `json:"launches"`
	Matched   int `json:"matched"`
	Unmatched int `json:"unmatched"`
	// Stats are the simulator statistics it gave a counter for.
	Stats []string `json:"stats"`
	// Durations is the column it gave launch durations from
	// (gpu__time_duration.sum, nvprof's Duration), kept as the counter
	// hwprofile.DurationStat; "" when it has none.
	Durations string `json:"durations,omitempty"`
	// Sum fingerprints the file as it was read (tracedir.Tree.FileSig):
	// the scanner reads a ready trace's profiles again when a file's
	// differs.
	Sum string `json:"sum,omitempty"`
	// Error says why it was not read (a malformed file names its line and
	// column); nothing of it was then stored.
	Error string `json:"error,omitempty"`
}
