package simconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade"
)

// File names inside a tested-config directory, passed to the simulator as
// -config <dir>/gpgpusim.config -config <dir>/trace.config, in that order.
const (
	GPGPUSimFile = "gpgpusim.config"
	TraceFile    = "trace.config"
)

// GPGPUSimPath is the path of c's gpgpusim.config.
func GPGPUSimPath(c cascade.SimConfig) string { return filepath.Join(c.Dir, GPGPUSimFile) }

// TracePath is the path of c's trace.config.
func TracePath(c cascade.SimConfig) string {
	if c.TraceDir != "" {
		return filepath.Join(c.TraceDir, TraceFile)
	}
	return filepath.Join(c.Dir, TraceFile)
}

// SimulatorArgs are the simulator arguments that select c, in the order
// Accel-Sim expects them: -config gpgpusim.config -config trace.config,
// then a variant's overrides, which win over the files' values.
func SimulatorArgs(c cascade.SimConfig) []string {
	args := []string{"-config", GPGPUSimPath(c), "-config", TracePath(c)}
	for _, p := range c.Params {
		args = append(args, p.Option, p.Value)
	}
	return args
}

// Load reads every subdirectory of dir as a tested config, sorted by name.
// Dot-directories and plain files are skipped. A directory that is not a
// usable config is still listed, with its Err set; Load itself fails only
// when dir cannot be read.
func Load(dir string) ([]cascade.SimConfig, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read sim configs %s: %w", dir, err)
	}
	var cfgs []cascade.SimConfig
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		// os.Stat follows symlinks: a linked config directory counts, and a
		// dangling link is listed as broken rather than silently lost.
		info, err := os.Stat(path)
		switch {
		case err != nil && e.Type()&fs.ModeSymlink != 0:
			cfgs = append(cfgs, cascade.SimConfig{Name: name, Dir: path, Err: fmt.Sprintf("directory: %v", err)})
			continue
		case err != nil || !info.IsDir():
			continue
		}
		cfgs = append(cfgs, loadOne(name, path))
	}
	sort.Slice(cfgs, func(i, j int) bool { return cfgs[i].Name < cfgs[j].Name })
	return cfgs, nil
}

// LoadPaired reads tested configs kept apart, as an Accel-Sim checkout keeps
// them: every directory of traceDir (gpu-simulator/configs/tested-cfgs)
// holds a trace.config and is paired with the directory of the same name
// in gpgpuDir (gpu-simulator/gpgpu-sim/configs/tested-cfgs), which holds its
// gpgpusim.config and side files. Configs are sorted by name; one without
// its partner is listed with its Err set. GPGPU-Sim's configs that Accel-Sim
// has no trace.config for are not listed: the trace-driven simulator cannot
// run them.
func LoadPaired(gpgpuDir, traceDir string) ([]cascade.SimConfig, error) {
	names, err := subdirs(traceDir)
	if err != nil {
		return nil, fmt.Errorf("read sim configs %s: %w", traceDir, err)
	}
	// A gpgpusim.config folder without its trace.config half (SM2_GTX480,
	// which Accel-Sim's trace-driven side never got) is listed too, as a
	// config that cannot run and why: not dropped without a word.
	gpgpu, _ := subdirs(gpgpuDir)
	seen := map[string]bool{}
	var cfgs []cascade.SimConfig
	for _, name := range names {
		seen[name] = true
		c := cascade.SimConfig{Name: name, Dir: filepath.Join(gpgpuDir, name), TraceDir: filepath.Join(traceDir, name)}
		if _, err := os.Stat(c.Dir); err != nil {
			c.Err = fmt.Sprintf("%s: no such directory for this config's %s", c.Dir, GPGPUSimFile)
			cfgs = append(cfgs, c)
			continue
		}
		cfgs = append(cfgs, load(c))
	}
	for _, name := range gpgpu {
		if seen[name] {
			continue
		}
		tdir := filepath.Join(traceDir, name)
		c := load(cascade.SimConfig{Name: name, Dir: filepath.Join(gpgpuDir, name), TraceDir: tdir})
		c.Err = fmt.Sprintf("%s: missing: this config has no trace-driven half (%s), so the trace-driven simulator cannot run it", filepath.Join(tdir, TraceFile), TraceFile)
		cfgs = append(cfgs, c)
	}
	sort.Slice(cfgs, func(i, j int) bool { return cfgs[i].Name < cfgs[j].Name })
	return cfgs, nil
}

// subdirs lists dir's directories (or links to them), dotfiles left out.
func subdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if info, err := os.Stat(filepath.Join(dir, name)); err == nil && info.IsDir() {
			names = append(names, name)
		}
	}
	return names, nil
}

// LoadOne reads a single tested-config directory. Problems are reported in
// the returned config's Err.
func LoadOne(dir string) cascade.SimConfig {
	return loadOne(filepath.Base(filepath.Clean(dir)), dir)
}

func loadOne(name, dir string) cascade.SimConfig {
	return load(cascade.SimConfig{Name: name, Dir: dir})
}

// load reads c's two files and fills in what they say.
func load(c cascade.SimConfig) cascade.SimConfig {
	opts := options{}
	// The simulator reads gpgpusim.config, then trace.config, into one option
	// table: an option set in both takes the value read last.
	for _, file := range []string{GPGPUSimFile, TraceFile} {
		path := GPGPUSimPath(c)
		if file == TraceFile {
			path = TracePath(c)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				c.Err = file + ": missing"
			} else {
				c.Err = fmt.Sprintf("%s: %v", file, err)
			}
			return c
		}
		opts.parse(file, string(data))
	}

	cc, err := opts.computeCapability()
	if err != nil {
		c.Err = err.Error()
	} else {
		c.ComputeCapability = cc
	}
	clock, err := opts.coreClock()
	if err != nil && c.Err == "" {
		c.Err = err.Error()
	}
	c.CoreClockMHz = clock
	c.LaunchLatencyCycles = opts.launchLatency()
	c.L2Bytes = opts.l2Bytes()
	return c
}

// launchLatency is -gpgpu_kernel_launch_latency; nil when absent or not
// a number of cycles.
func (o options) launchLatency() *int {
	opt, ok := o["-gpgpu_kernel_launch_latency"]
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(opt.value))
	if err != nil || n < 0 {
		return nil
	}
	return &n
}

// option is the last value an option was given, and where.
type option struct {
	value string
	file  string
}

type options map[string]option

// parse reads config text the way GPGPU-Sim's option parser does: everything
// from the first '#' on a line is a comment, the rest of the file is one
// stream of whitespace-separated tokens ("quoted values" may hold spaces),
// and options are "-name value" pairs in which a later value wins. Only
// options that take a value are recorded faithfully, which is all Cascade
// reads; a boolean flag without a value may pair with the next token, but
// that token is then an option name and is looked up by name anyway.
func (o options) parse(file, text string) {
	for i, tokens := 0, tokenize(text); i < len(tokens); i++ {
		name := tokens[i]
		if !strings.HasPrefix(name, "-") || i+1 >= len(tokens) {
			continue
		}
		val := tokens[i+1]
		if strings.HasPrefix(val, "-") && !isNumber(val) {
			continue // name was a bare flag; val is the next option
		}
		o[name] = option{value: val, file: file}
		i++
	}
}

// tokenize strips comments and splits text into tokens, joining a
// "quoted value" that spans several words into one token without quotes.
func tokenize(text string) []string {
	var tokens []string
	var quoted []string
	for line := range strings.SplitSeq(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.Fields(line) {
			switch {
			case quoted != nil:
				quoted = append(quoted, f)
				if strings.HasSuffix(f, `"`) {
					tokens = append(tokens, strings.Trim(strings.Join(quoted, " "), `"`))
					quoted = nil
				}
			case strings.HasPrefix(f, `"`) && !(len(f) > 1 && strings.HasSuffix(f, `"`)):
				quoted = []string{f}
			default:
				tokens = append(tokens, strings.Trim(f, `"`))
			}
		}
	}
	if quoted != nil {
		tokens = append(tokens, strings.Trim(strings.Join(quoted, " "), `"`))
	}
	return tokens
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func (o options) computeCapability() (string, error) {
	var parts [2]string
	for i, name := range []string{"-gpgpu_compute_capability_major", "-gpgpu_compute_capability_minor"} {
		opt, ok := o[name]
		if !ok {
			return "", fmt.Errorf("%s: no %s", GPGPUSimFile, name)
		}
		n, err := strconv.ParseUint(opt.value, 10, 32)
		if err != nil {
			return "", fmt.Errorf("%s: %s %q: not a number", opt.file, name, opt.value)
		}
		parts[i] = strconv.FormatUint(n, 10)
	}
	return parts[0] + "." + parts[1], nil
}

func (o options) coreClock() (float64, error) {
	const name = "-gpgpu_clock_domains"
	opt, ok := o[name]
	if !ok {
		return 0, nil
	}
	core, _, _ := strings.Cut(opt.value, ":")
	mhz, err := strconv.ParseFloat(core, 64)
	if err != nil || !(mhz > 0) || math.IsInf(mhz, 0) {
		return 0, fmt.Errorf("%s: %s %q: core clock is not a positive number", opt.file, name, opt.value)
	}
	return mhz, nil
}

// ArchCapability turns a trace architecture into a compute capability:
// "sm_90" → "9.0", "sm_86" → "8.6", "sm_100" → "10.0". It also accepts
// "compute_90", an arch-specific suffix ("sm_90a"), and a capability already
// written as "9.0". "" means [cascade.DefaultTraceGPUArch].
func ArchCapability(arch string) (string, bool) {
	s := strings.ToLower(strings.TrimSpace(arch))
	if s == "" {
		s = cascade.DefaultTraceGPUArch
	}
	if major, minor, ok := strings.Cut(s, "."); ok {
		if isDigits(major) && isDigits(minor) {
			return trimZeros(major) + "." + trimZeros(minor), true
		}
		return "", false
	}
	for _, prefix := range []string{"sm_", "compute_", "sm"} {
		if rest, ok := strings.CutPrefix(s, prefix); ok {
			s = rest
			break
		}
	}
	s = strings.TrimRight(s, "af") // sm_90a, sm_100f: same capability
	if len(s) < 2 || !isDigits(s) {
		return "", false
	}
	return trimZeros(s[:len(s)-1]) + "." + s[len(s)-1:], true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func trimZeros(s string) string {
	t := strings.TrimLeft(s, "0")
	if t == "" {
		return "0"
	}
	return t
}

// CrossArchitecture reports whether a run of c simulates a trace of the
// given architecture on another architecture than it was taken on: both
// are known and differ. The simulator decodes a trace's instructions by
// its binary version, so such a run works; it answers how the workload
// would run on that other GPU.
func CrossArchitecture(c cascade.SimConfig, traceGPUArch string) bool {
	want, ok := ArchCapability(traceGPUArch)
	return ok && c.ComputeCapability != "" && c.ComputeCapability != want
}

// IsCompatible reports whether c is a config of the architecture a trace
// was taken on: c is usable and its compute capability matches. It chooses
// the default config; it does not forbid the others.
func IsCompatible(c cascade.SimConfig, traceGPUArch string) bool {
	want, ok := ArchCapability(traceGPUArch)
	return ok && c.Usable() && c.ComputeCapability == want
}

// Compatible returns the configs, in their order, that can simulate a trace
// of the given architecture ("sm_90"; "" means [cascade.DefaultTraceGPUArch]).
func Compatible(cfgs []cascade.SimConfig, traceGPUArch string) []cascade.SimConfig {
	var out []cascade.SimConfig
	for _, c := range cfgs {
		if IsCompatible(c, traceGPUArch) {
			out = append(out, c)
		}
	}
	return out
}

// Default picks the config a new run of the trace starts with: the suggested
// one (by name, else by its name in another case) when it is usable,
// whatever its architecture (metadata.json names it: the Traces guide
// preselects the first compatible config only because the profiler sets
// none; a run of another architecture is a cross-architecture run), else
// the first compatible one. It reports false when neither is there.
func Default(cfgs []cascade.SimConfig, traceGPUArch, suggested string) (cascade.SimConfig, bool) {
	if c, ok := Suggested(cfgs, suggested); ok && c.Usable() {
		return c, true
	}
	compatible := Compatible(cfgs, traceGPUArch)
	if len(compatible) == 0 {
		return cascade.SimConfig{}, false
	}
	return compatible[0], true
}

// Suggested finds the config a trace's suggested_sim_config names: by its
// name, else by its name in another case ("sm90_h100" is SM90_H100).
func Suggested(cfgs []cascade.SimConfig, name string) (cascade.SimConfig, bool) {
	if name == "" {
		return cascade.SimConfig{}, false
	}
	if c, ok := Find(cfgs, name); ok {
		return c, true
	}
	for _, c := range cfgs {
		if strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return cascade.SimConfig{}, false
}

// Find returns the config with the given name.
func Find(cfgs []cascade.SimConfig, name string) (cascade.SimConfig, bool) {
	for _, c := range cfgs {
		if c.Name == name {
			return c, true
		}
	}
	return cascade.SimConfig{}, false
}
