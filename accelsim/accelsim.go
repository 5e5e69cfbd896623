package accelsim

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Paths inside a checkout, slash-separated, relative to its root.
const (
	BinaryPath          = "gpu-simulator/bin/release/accel-sim.out"
	GPGPUSimConfigsPath = "gpu-simulator/gpgpu-sim/configs/tested-cfgs"
	TraceConfigsPath    = "gpu-simulator/configs/tested-cfgs"
	// LibPath holds GPGPU-Sim's builds: lib/gcc-<version>/cuda-<version>/<release|debug>/,
	// the directory gpgpu-sim's setup_environment puts on LD_LIBRARY_PATH.
	LibPath = "gpu-simulator/gpgpu-sim/lib"
	// ModifiersPath is the launcher's base configs and composable
	// modifiers, which name config variants ("QV100-64SM").
	ModifiersPath = "util/job_launching/configs/define-standard-cfgs.yml"
	// TraceParserPath is the simulator's trace reader, whose source says
	// which trace files it opens.
	TraceParserPath = "gpu-simulator/trace-parser"
)

// Trace formats, as Checkout.Format names what a simulator reads; the
// built-in post-processor writes them under the same names
// (postproc.FormatTracez, CASCADE_TRACE_FORMAT).
const (
	FormatTracez = "tracez"
	FormatTraceg = "traceg"
)

// Checkout is what [Find] found. Paths are absolute when Dir is.
type Checkout struct {
	Dir string

	Binary          string // "" when missing
	GPGPUSimConfigs string // "" when missing
	TraceConfigs    string // "" when missing
	Configs         int    // tested configs with both halves
	LibDir          string // the directory holding libcudart.so; "" when missing
	// Modifiers is its launcher's define-standard-cfgs.yml (config
	// variants' bases and modifiers); "" when missing.
	Modifiers string

	// Format is the trace format the checkout's simulator reads, "" when
	// it cannot be told; FormatWhy says how it was told.
	Format    string
	FormatWhy string

	// Missing says, one sentence each, what is not there.
	Missing []string
	// Above is, when Dir is not a checkout but one of its parents looks
	// like one (Dir is its gpu-simulator/ folder, say), that parent.
	Above string
}

// Find reads the checkout at dir. It fails only when dir is not a
// directory; everything else missing is listed in Missing.
func Find(dir string) (Checkout, error) {
	c := Checkout{Dir: dir}
	if info, err := os.Stat(dir); err != nil {
		return c, fmt.Errorf("accel-sim checkout: %w", err)
	} else if !info.IsDir() {
		return c, fmt.Errorf("accel-sim checkout %s: not a directory", dir)
	}
	path := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }

	if info, err := os.Stat(path(BinaryPath)); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
		c.Binary = path(BinaryPath)
	} else {
		c.Missing = append(c.Missing, fmt.Sprintf("no simulator at %s: build it (source gpu-simulator/setup_environment.sh; make -C gpu-simulator)", BinaryPath))
		if c.Above = checkoutAbove(dir); c.Above != "" {
			c.Missing[len(c.Missing)-1] = fmt.Sprintf("no simulator at %s, and no checkout here: %s looks like the checkout (it holds gpu-simulator/); give that folder", BinaryPath, c.Above)
		}
	}
	gpgpu, trace := path(GPGPUSimConfigsPath), path(TraceConfigsPath)
	if isDir(gpgpu) {
		c.GPGPUSimConfigs = gpgpu
	} else {
		c.Missing = append(c.Missing, fmt.Sprintf("no %s: GPGPU-Sim is cloned there by gpu-simulator/setup_environment.sh", GPGPUSimConfigsPath))
	}
	if isDir(trace) {
		c.TraceConfigs = trace
	} else {
		c.Missing = append(c.Missing, fmt.Sprintf("no %s", TraceConfigsPath))
	}
	if c.GPGPUSimConfigs != "" && c.TraceConfigs != "" {
		c.Configs = countPairs(gpgpu, trace)
		if c.Configs == 0 {
			c.Missing = append(c.Missing, fmt.Sprintf("no tested config has both %s/<name>/gpgpusim.config and %s/<name>/trace.config", GPGPUSimConfigsPath, TraceConfigsPath))
		}
	}
	if info, err := os.Stat(path(ModifiersPath)); err == nil && !info.IsDir() {
		c.Modifiers = path(ModifiersPath)
	}
	if c.LibDir = findLib(path(LibPath)); c.LibDir == "" {
		c.Missing = append(c.Missing, fmt.Sprintf("no libcudart.so under %s: GPGPU-Sim's build puts it there (make -C gpu-simulator)", LibPath))
	}
	c.Format, c.FormatWhy = readFormat(path(TraceParserPath), c.Binary)
	return c, nil
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// countPairs counts the names with a trace.config in trace and a
// gpgpusim.config in gpgpu.
func countPairs(gpgpu, trace string) int {
	entries, _ := os.ReadDir(trace)
	n := 0
	for _, e := range entries {
		_, err1 := os.Stat(filepath.Join(trace, e.Name(), "trace.config"))
		_, err2 := os.Stat(filepath.Join(gpgpu, e.Name(), "gpgpusim.config"))
		if err1 == nil && err2 == nil {
			n++
		}
	}
	return n
}

// findLib returns the directory under lib holding libcudart.so (or a
// versioned libcudart.so.N): a release build over a debug one, then the
// newest.
func findLib(lib string) string {
	type found struct {
		dir     string
		release bool
		mod     int64
	}
	var all []found
	filepath.WalkDir(lib, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "libcudart.so") {
			return nil
		}
		info, err := os.Stat(p)
		if err != nil {
			return nil
		}
		dir := filepath.Dir(p)
		all = append(all, found{dir, filepath.Base(dir) == "release", info.ModTime().UnixNano()})
		return nil
	})
	if len(all) == 0 {
		return ""
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].release != all[j].release {
			return all[i].release
		}
		return all[i].mod > all[j].mod
	})
	return all[0].dir
}

// readFormat tells which trace format the simulator reads. Accel-Sim's
// trace reader opens files by their extension: the public 1.x reader
// (trace_parser.cc's PipeReader) knows ".traceg" and ".xz" and throws
// "Unsupported file type!" on anything else; 2.0's reads ".tracez" too. So
// a reader whose source, or failing that whose binary, names ".tracez"
// reads it, and one without it reads .traceg.
func readFormat(parserDir, binary string) (format, why string) {
	var src []byte
	files, _ := filepath.Glob(filepath.Join(parserDir, "*.cc"))
	headers, _ := filepath.Glob(filepath.Join(parserDir, "*.h"))
	for _, f := range append(files, headers...) {
		if b, err := os.ReadFile(f); err == nil {
			src = append(src, b...)
		}
	}
	if len(src) > 0 {
		if bytes.Contains(src, []byte(".tracez")) {
			return FormatTracez, TraceParserPath + " reads .tracez (Accel-Sim 2.0)"
		}
		return FormatTraceg, TraceParserPath + " reads .traceg and .traceg.xz only (Accel-Sim 1.x)"
	}
	if binary == "" {
		return "", ""
	}
	has, err := containsString(binary, ".tracez")
	switch {
	case err != nil:
		return "", ""
	case has:
		return FormatTracez, "accel-sim.out reads .tracez (Accel-Sim 2.0)"
	}
	return FormatTraceg, "accel-sim.out does not know .tracez (Accel-Sim 1.x)"
}

// containsString reports whether the file holds s, reading it in chunks.
func containsString(path, s string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20+len(s))
	keep := 0
	for {
		n, err := f.Read(buf[keep:])
		if bytes.Contains(buf[:keep+n], []byte(s)) {
			return true, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		// Keep the tail, in case s spans two reads.
		tail := min(len(s)-1, keep+n)
		copy(buf, buf[keep+n-tail:keep+n])
		keep = tail
	}
}

// Report says in a few lines what was found, or exactly what is missing.
func (c Checkout) Report() []string {
	var lines []string
	if c.Binary != "" {
		lines = append(lines, "simulator "+c.Binary)
	}
	if c.Configs > 0 {
		lines = append(lines, fmt.Sprintf("%d tested configs (%s paired with %s)", c.Configs, GPGPUSimConfigsPath, TraceConfigsPath))
	}
	if c.LibDir != "" {
		lines = append(lines, "library path "+c.LibDir)
	}
	if c.Modifiers != "" {
		lines = append(lines, "config modifiers "+c.Modifiers)
	}
	if c.Format != "" {
		lines = append(lines, "reads "+c.Format+": "+c.FormatWhy)
	} else {
		lines = append(lines, "cannot tell which trace format the simulator reads (no "+TraceParserPath+" sources, no binary)")
	}
	for _, m := range c.Missing {
		lines = append(lines, "missing: "+m)
	}
	return lines
}
