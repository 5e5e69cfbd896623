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

	// L2Bytes is the L2's capacity (package accelsim/simconfig's L2); 0
	// when it cannot be read.
	L2Bytes uint64

	// Base is, on a variant, the tested config it is made of (Name is
	// then the variant's name, "SM7_QV100-64SM"); "" on a tested config.
	Base string
	// Params are a variant's overrides, in the order the simulator is
	// given them after the -config files (a later one wins); nil on a
	// tested config.
	Params []SimParam

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

// IsVariant reports whether c is a tested config with overrides.
func (c SimConfig) IsVariant() bool { return c.Base != "" }

// SimParam is one GPGPU-Sim option a config variant sets on its base:
// given to the simulator after the config files, it overrides the files'
// value, as Accel-Sim's launcher appends a modifier's extra_params to the
// copied gpgpusim.config.
type SimParam struct {
	Option string `json:"option"` // with its dash: "-gpgpu_n_clusters"
	Value  string `json:"value"`
	// From is the modifier of define-standard-cfgs.yml the override came
	// from ("64SM"); "" for one given directly.
	From string `json:"from,omitempty"`
}

// String is the override as the simulator is given it: "-gpgpu_n_clusters 64".
func (p SimParam) String() string { return p.Option + " " + p.Value }
