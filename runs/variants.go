package runs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// variantChecks is what the simulator said of the variants it was asked
// about: a refusal ("" taken) by variant key (see variantKey).
type variantChecks struct {
	mu   sync.Mutex
	seen map[string]string
}

// Modifiers reads the define-standard-cfgs.yml that names variants (see
// [Config.ModifiersFile]), anew on each call so an edit shows without a
// restart. Without one, or when its file is not there, it defines
// nothing.
func (c *Configs) Modifiers() (simconfig.Modifiers, error) {
	if c.cfg.ModifiersFile == "" {
		return simconfig.Modifiers{}, nil
	}
	m, err := simconfig.LoadModifiers(c.cfg.ModifiersFile)
	if errors.Is(err, fs.ErrNotExist) {
		return simconfig.Modifiers{}, nil
	}
	return m, err
}

// Variant resolves a config's name, with any overrides given beside it,
// into the config a run launches with (see [simconfig.Variant]) and has
// the simulator check a variant's overrides (see [Configs.CheckVariants]).
// Every refusal is BAD_USER_INPUT naming the field: "simConfig: ..." or
// "simConfig, params: ...".
func (c *Configs) Variant(ctx context.Context, name string, params []cascade.SimParam) (cascade.SimConfig, error) {
	return c.variant(ctx, nil, name, params)
}

// variant is Variant resolving with *r, read first when nil: a batch of
// launches reads the configs and modifiers once.
func (c *Configs) variant(ctx context.Context, r *resolver, name string, params []cascade.SimParam) (cascade.SimConfig, error) {
	field := "simConfig"
	if len(params) > 0 {
		field = "simConfig, params"
	}
	if r == nil || !r.read {
		fresh, err := c.newResolver()
		if err != nil {
			return cascade.SimConfig{}, err
		}
		if r == nil {
			r = &fresh
		} else {
			*r = fresh
		}
	}
	v, why := r.resolve(name, params)
	if why != "" {
		return v, cascade.Errorf(cascade.EINVALID, "%s: %s", field, why)
	}
	refusals, err := c.CheckVariants(ctx, []cascade.SimConfig{v})
	var u *unrunnable
	if errors.As(err, &u) {
		return v, cascade.Errorf(cascade.EINVALID, "%s: %s: %s", field, v.Name, u.why())
	}
	if err != nil {
		return v, err
	}
	if refusals[0] != "" {
		return v, cascade.Errorf(cascade.EINVALID, "%s: %s: the simulator refuses it: %s", field, v.Name, refusals[0])
	}
	return v, nil
}

// resolver resolves variants' names against one reading of the configs
// and modifiers.
type resolver struct {
	read bool // cfgs and mods are read
	cfgs []cascade.SimConfig
	mods simconfig.Modifiers
}

func (c *Configs) newResolver() (resolver, error) {
	cfgs, err := c.SimConfigs()
	if err != nil {
		return resolver{}, err
	}
	mods, err := c.Modifiers()
	return resolver{read: true, cfgs: cfgs, mods: mods}, err
}

// resolve is [simconfig.Variant], its error said for a user; "" when
// the config can be used.
func (r resolver) resolve(name string, params []cascade.SimParam) (cascade.SimConfig, string) {
	v, err := simconfig.Variant(r.cfgs, r.mods, name, params)
	switch {
	case err != nil && len(r.cfgs) == 0:
		return v, simconfig.Unknown(r.cfgs, name)
	case err != nil:
		return v, err.Error()
	case !v.Usable():
		return v, fmt.Sprintf("%s cannot be used: %s", v.Name, v.Err)
	}
	return v, ""
}

// runConfig is the config run r launches with: its base as the configs
// directory has it now, with the overrides recorded at its launch.
func (c *Configs) runConfig(r cascade.Run) (cascade.SimConfig, error) {
	base, err := c.find(r.BaseConfig())
	if err != nil || len(r.ConfigParams) == 0 {
		return base, err
	}
	v := base
	v.Base, v.Name = base.Name, r.SimConfig
	return simconfig.Apply(v, r.ConfigParams)
}

// quotedOption finds the option a simulator's refusal names.
var quotedOption = regexp.MustCompile(`option '(-[A-Za-z0-9_]+)'|Option: '(-[A-Za-z0-9_]+)'`)

// CheckVariants asks the simulator whether it takes the overrides of
// each variant of vs (see [simprobe.Simulator.CheckOptions]), once per
// base config content and overrides, and returns for each "" when it
// does (or when vs[i] is a tested config, which the probe at start
// checked, or there is no simulator to ask), else the simulator's line,
// followed by the override it refused, the modifier that override came
// from and, when the base has an option of a like name, that name
// ("-gmem_skip_L1D": SM7_QV100 has -gpgpu_gmem_skip_L1D). The variants
// of one base not checked before are first asked together, all their
// overrides on one command line: the simulator reads every option, so
// when it takes them all each is taken; only when it refuses one is
// each variant asked alone.
func (c *Configs) CheckVariants(ctx context.Context, vs []cascade.SimConfig) ([]string, error) {
	out := make([]string, len(vs))
	if len(c.cfg.Probe.Command) == 0 {
		return out, nil
	}
	keys := make([]string, len(vs))
	type group struct {
		base cascade.SimConfig
		todo []int
	}
	var order []string
	groups := map[string]*group{}
	c.checks.mu.Lock()
	for i, v := range vs {
		if !v.IsVariant() {
			continue
		}
		keys[i] = variantKey(v)
		if _, ok := c.checks.seen[keys[i]]; ok {
			continue
		}
		g := groups[v.Base]
		if g == nil {
			g = &group{base: v}
			groups[v.Base] = g
			order = append(order, v.Base)
		}
		g.todo = append(g.todo, i)
	}
	c.checks.mu.Unlock()
	for _, b := range order {
		g := groups[b]
		if len(g.todo) > 1 {
			all := g.base
			all.Params = nil
			for _, i := range g.todo {
				all.Params = append(all.Params, vs[i].Params...)
			}
			refusal, err := c.checkVariant(ctx, all, variantKey(all))
			if err != nil {
				return nil, err
			}
			if refusal == "" {
				c.remember(keys, g.todo, "")
				continue
			}
		}
		for _, i := range g.todo {
			refusal, err := c.checkVariant(ctx, vs[i], keys[i])
			if err != nil {
				return nil, err
			}
			c.remember(keys, []int{i}, refusal)
		}
	}
	c.checks.mu.Lock()
	defer c.checks.mu.Unlock()
	for i, v := range vs {
		if keys[i] != "" && c.checks.seen[keys[i]] != "" {
			out[i] = explainRefusal(v, c.checks.seen[keys[i]])
		}
	}
	return out, nil
}

// remember keeps the simulator's answer for the variants of keys at idx.
func (c *Configs) remember(keys []string, idx []int, refusal string) {
	c.checks.mu.Lock()
	defer c.checks.mu.Unlock()
	for _, i := range idx {
		c.checks.seen = setIn(c.checks.seen, keys[i], refusal)
	}
}

func (c *Configs) checkVariant(ctx context.Context, v cascade.SimConfig, key string) (string, error) {
	dir := filepath.Join(c.cfg.WorkDir, "probe-variants", key[len(key)-16:])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if err := linkConfigFolders(dir, v); err != nil {
		return "", err
	}
	refusal, err := c.cfg.Probe.CheckOptions(ctx, dir, simconfig.SimulatorArgs(v))
	if err != nil {
		return "", &unrunnable{err: err}
	}
	c.log.Debug("variant checked by the simulator", "config", v.Name, "overrides", len(v.Params), "refusal", refusal)
	return refusal, nil
}

// unrunnable is CheckVariants's error when the simulator could not be run
// to ask it (its command is not there, say): every variant asked is
// refused for it, as a launch's problem, naming the field.
type unrunnable struct{ err error }

func (u *unrunnable) Error() string { return "check variants with the simulator: " + u.err.Error() }
func (u *unrunnable) Unwrap() error { return u.err }

// why is the refusal of a variant the simulator could not check.
func (u *unrunnable) why() string { return "the simulator cannot be run to check it: " + u.err.Error() }

// explainRefusal adds to the simulator's line where the refused option
// came from, and the base's option of a like name when there is one.
func explainRefusal(v cascade.SimConfig, line string) string {
	m := quotedOption.FindStringSubmatch(line)
	if m == nil {
		return line
	}
	opt := m[1] + m[2]
	for _, p := range v.Params {
		if p.Option != opt {
			continue
		}
		line += " (" + p.String()
		if p.From != "" {
			line += ", from modifier " + p.From
		}
		line += ")"
		if like := likeOption(v, opt); like != "" {
			line += fmt.Sprintf("; %s has %s", v.Base, like)
		}
		break
	}
	return line
}

// likeOption is an option of v's config files whose name ends with opt's
// (-gpgpu_gmem_skip_L1D for -gmem_skip_L1D), or "".
func likeOption(v cascade.SimConfig, opt string) string {
	for _, file := range []string{simconfig.GPGPUSimPath(v), simconfig.TracePath(v)} {
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && f[0] != opt && strings.HasSuffix(f[0], "_"+opt[1:]) {
				return f[0]
			}
		}
	}
	return ""
}

// variantKey names a variant by its base's files' contents and its
// overrides: an edited config, or other overrides, are checked anew.
func variantKey(v cascade.SimConfig) string {
	h := sha256.New()
	base := v
	base.Name = v.Base
	h.Write([]byte(configKey(base)))
	for _, p := range v.Params {
		fmt.Fprintf(h, "\x00%s\x00%s", p.Option, p.Value)
	}
	return hex.EncodeToString(h.Sum(nil))
}
