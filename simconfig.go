package cascade

// SimConfig is one Accel-Sim tested config (SM90_H100, SM86_RTX3070, ...):
// a directory holding its gpgpusim.config and trace.config, or, as an
// Accel-Sim checkout keeps them, a gpgpusim.config directory paired with a
// trace.config directory of the same name. Package accelsim/simconfig reads
// them and decides which suit a trace.
type SimConfig struct {
	Name string // directory name, e.g. "SM90_H100"
	Dir  string // the gpgpusim.config directory
	// TraceDir is the trace.config directory when it is not Dir.
	TraceDir string

	// ComputeCapability is "major.minor" from -gpgpu_compute_capability_major
	// and _minor, e.g. "9.0"; "" when it could not be read.
	ComputeCapability string

	// CoreClockMHz is the first field of -gpgpu_clock_domains; 0 when the
	// option is absent.
	CoreClockMHz float64

	// LaunchLatencyCycles is -gpgpu_kernel_launch_latency, the cycles the
	// simulator adds to each kernel launch; nil when the option is absent
	// or not a number.
	LaunchLatencyCycles *int

	// Err says why the config cannot be used ("trace.config: missing", ...).
	// A config with an Err is never compatible and never the default.
	Err string
}

// Usable reports whether the config has no Err.
func (c SimConfig) Usable() bool { return c.Err == "" }

// SimTimeNs is the time cycles take at c's core clock: cycles / MHz, in
// nanoseconds. It reports false when the clock is unknown.
func (c SimConfig) SimTimeNs(cycles int64) (float64, bool) {
	if !(c.CoreClockMHz > 0) {
		return 0, false
	}
	return float64(cycles) * 1000 / c.CoreClockMHz, true
}
