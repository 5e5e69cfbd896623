package runs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/accelsim/simprobe"
)

// probeState is what the simulator probe found; the zero value knows
// nothing yet.
type probeState struct {
	mu      sync.Mutex
	checked bool
	// refusals are the simulator's decisive lines for the configs it
	// refused, by config key (see configKey).
	refusals map[string]string
	// versions are the binary versions the simulator decodes; nil when
	// unknown.
	versions []int
	build    string // the simulator's build lines, joined by "; "
}

// probeCache is the probe's answers as kept in Config.ProbeCache.
type probeCache struct {
	// Simulator is the simulator binary's SHA-256 and mtime: answers of
	// another binary are not reused.
	Simulator string            `json:"simulator"`
	Configs   map[string]string `json:"configs"` // config key: refusal ("" accepted)
	Versions  []int             `json:"versions"`
	// Build is the simulator's build lines, joined by "; "; "" when
	// unknown.
	Build string `json:"build,omitempty"`
}

// SimConfigsChecked reports whether the simulator probe has finished
// (or there is none): until then configs the simulator refuses look
// usable, and every trace simulatable.
func (c *Configs) SimConfigsChecked() bool {
	if len(c.cfg.Probe.Command) == 0 {
		return true
	}
	c.probe.mu.Lock()
	defer c.probe.mu.Unlock()
	return c.probe.checked
}

// refused gives each usable config the simulator refused an Err saying so.
func (c *Configs) refused(cfgs []cascade.SimConfig) []cascade.SimConfig {
	c.probe.mu.Lock()
	defer c.probe.mu.Unlock()
	if len(c.probe.refusals) == 0 {
		return cfgs
	}
	for i, sc := range cfgs {
		if !sc.Usable() {
			continue
		}
		if line := c.probe.refusals[configKey(sc)]; line != "" {
			cfgs[i].Err = "the simulator refuses it: " + line
		}
	}
	return cfgs
}

// NotSimulatable returns why the simulator cannot simulate trace t (it
// does not decode the trace's binary version), or "" when it can or that
// is not known.
func (c *Configs) NotSimulatable(t cascade.Trace) string {
	c.probe.mu.Lock()
	versions, build := c.probe.versions, c.probe.build
	c.probe.mu.Unlock()
	if versions == nil {
		return ""
	}
	// The simulator decodes a trace by its kernel headers: metadata.json's
	// trace_gpu_arch (or the guide's sm_90, assumed) counts only when no
	// header was read.
	arch, from := t.TraceGPUArch, ""
	if t.TraceGPUArchFrom != "" {
		from = " (from " + t.TraceGPUArchFrom + ")"
	}
	if t.HeaderArch != "" && t.TraceGPUArchFrom == cascade.ArchFromMetadata {
		arch, from = t.HeaderArch, " (by its kernel traces' headers; metadata.json says "+t.TraceGPUArch+")"
	}
	v, ok := binaryVersion(arch)
	if !ok || slices.Contains(versions, v) {
		return ""
	}
	have := make([]string, len(versions))
	for i, v := range versions {
		have[i] = strconv.Itoa(v)
	}
	need := ""
	if v >= 90 {
		need = " (Accel-Sim 2.0)"
	}
	sim := "the simulator"
	if build != "" {
		sim += " (" + build + ")"
	}
	return fmt.Sprintf("%s decodes binary versions %s; this trace is %s%s: it needs a simulator that decodes %d%s",
		sim, strings.Join(have, ", "), arch, from, v, need)
}

// binaryVersion is the binary version of an architecture: "sm_90" is 90.
func binaryVersion(arch string) (int, bool) {
	s, ok := strings.CutPrefix(arch, "sm_")
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimRight(s, "abf"))
	return v, err == nil
}

// configKey names a config with the contents of its two files: a config
// edited since it was checked is checked again.
func configKey(c cascade.SimConfig) string {
	h := sha256.New()
	for _, f := range []string{simconfig.GPGPUSimPath(c), simconfig.TracePath(c)} {
		b, _ := os.ReadFile(f)
		fmt.Fprintf(h, "%d\n", len(b))
		h.Write(b)
	}
	return c.Name + ":" + hex.EncodeToString(h.Sum(nil))
}

// probeKey names what a probe's answers hold for: the simulator's sum
// (SimulatorSum, which counts a wrapper's words, "env X=1
// accel-sim.out"), its program's modification time, and the command line.
func probeKey(command []string) (string, error) {
	sum, err := SimulatorSum(command)
	if err != nil {
		return "", err
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		return "", err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return sum + " " + st.ModTime().UTC().Format("2006-01-02T15:04:05.000000000Z") + " " + strings.Join(command, " "), nil
}

// Probe asks the simulator (Config.Probe), once, which of the configs it
// accepts and which binary versions it decodes, reusing the answers kept
// in Config.ProbeCache for the same simulator binary (its SHA-256 and
// mtime) and config files. A refused config gets an Err from then on, and
// a trace of a binary version the simulator does not decode is not
// launched (see [Configs.NotSimulatable]). The simulator runs on the
// server, whatever the executor: Slurm's compute nodes run the same
// binary from a shared filesystem. It publishes [SimConfigsChecked] when
// done; a simulator that cannot be run leaves everything as it was
// (runs then fail saying why).
func (c *Configs) Probe(ctx context.Context) {
	if len(c.cfg.Probe.Command) == 0 {
		return
	}
	defer func() {
		c.probe.mu.Lock()
		c.probe.checked = true
		c.probe.mu.Unlock()
		c.cfg.Events.Publish(cascade.SimConfigsChecked{})
	}()
	err := c.runProbe(ctx)
	switch {
	case err == nil || ctx.Err() != nil:
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		c.log.Info("no simulator to probe; configs and traces are not checked against it", "err", err)
	default:
		c.log.Warn("simulator probe failed; configs and traces are not checked against the simulator", "err", err)
	}
}

func (c *Configs) runProbe(ctx context.Context) error {
	key, err := probeKey(c.cfg.Probe.Command)
	if err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	var cache probeCache
	if c.cfg.ProbeCache != "" {
		if b, err := os.ReadFile(c.cfg.ProbeCache); err == nil {
			if json.Unmarshal(b, &cache) != nil || cache.Simulator != key {
				cache = probeCache{}
			}
		}
	}
	cache.Simulator = key
	if cache.Configs == nil {
		cache.Configs = map[string]string{}
	}
	cfgs, err := c.SimConfigs()
	if err != nil {
		return err
	}
	root := filepath.Join(c.cfg.WorkDir, "probe")
	defer os.RemoveAll(root)
	refusals := map[string]string{}
	var accepted string // a probe directory of an accepted config
	for _, sc := range cfgs {
		if !sc.Usable() {
			continue
		}
		k := configKey(sc)
		refusal, ok := cache.Configs[k]
		if !ok || (refusal == "" && cache.Versions == nil && accepted == "") {
			dir := filepath.Join(root, sc.Name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := linkConfigFolders(dir, sc); err != nil {
				return err
			}
			var build []string
			if refusal, build, err = c.cfg.Probe.Check(ctx, dir, simconfig.SimulatorArgs(sc)); err != nil {
				return err
			}
			if len(build) > 0 {
				cache.Build = strings.Join(build, "; ")
			}
			cache.Configs[k] = refusal
			if refusal == "" && accepted == "" {
				accepted = dir
			}
		}
		if refusal != "" {
			refusals[k] = refusal
			c.log.Info("the simulator refuses a config", "config", sc.Name, "line", refusal)
		}
	}
	c.probe.mu.Lock()
	c.probe.refusals = refusals
	c.probe.mu.Unlock()
	if cache.Versions == nil && accepted != "" {
		sc, _ := simconfig.Find(cfgs, filepath.Base(accepted))
		v, err := c.cfg.Probe.BinaryVersions(ctx, accepted, simconfig.SimulatorArgs(sc), simprobe.Candidates)
		if err != nil {
			return err
		}
		cache.Versions = v
		if cache.Versions == nil {
			cache.Versions = []int{}
		}
	}
	if cache.Versions != nil {
		c.log.Info("the simulator decodes binary versions", "versions", cache.Versions)
		c.probe.mu.Lock()
		c.probe.versions, c.probe.build = cache.Versions, cache.Build
		c.probe.mu.Unlock()
	}
	if c.cfg.ProbeCache == "" {
		return nil
	}
	b, err := json.Marshal(cache)
	if err != nil {
		return err
	}
	tmp := c.cfg.ProbeCache + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("save simulator probe: %w", err)
	}
	return os.Rename(tmp, c.cfg.ProbeCache)
}
