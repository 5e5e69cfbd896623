package runs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// Configs is the configs runs launch with: the tested configs of the
// configs directory (with an Accel-Sim checkout's trace.config halves),
// read anew on each call, each checked by the simulator once
// ([Configs.Probe], probe.go): a config it refuses is unusable, a trace
// of a binary version it does not decode is not simulatable. Its methods
// are safe for concurrent use.
type Configs struct {
	cfg   Config // its ConfigsDir, TraceConfigsDir, Probe, ProbeCache, WorkDir, Store and Events
	log   *slog.Logger
	probe probeState
	// checks are the simulator's answers on variants (variants.go).
	checks variantChecks
}

// RunSimConfig returns the config a run was launched with; one that has
// left the configs directory since comes back with only its name and an
// Err saying so.
func (c *Configs) RunSimConfig(r cascade.Run) (cascade.SimConfig, error) {
	cfgs, err := c.SimConfigs()
	if err != nil {
		return cascade.SimConfig{}, err
	}
	sc, ok := simconfig.Find(cfgs, r.BaseConfig())
	if !ok {
		return cascade.SimConfig{Name: r.SimConfig, Base: r.ConfigBase, Params: r.ConfigParams, Err: c.Gone()}, nil
	}
	if len(r.ConfigParams) == 0 {
		return sc, nil
	}
	v := sc
	v.Base, v.Name = sc.Name, r.SimConfig
	if v, err = simconfig.Apply(v, r.ConfigParams); err != nil {
		v.Err = err.Error()
	}
	return v, nil
}

// CompatibleSimConfigs returns the configs of the architecture the trace
// was taken on (see [simconfig.Compatible]).
func (c *Configs) CompatibleSimConfigs(t cascade.Trace) ([]cascade.SimConfig, error) {
	cfgs, err := c.SimConfigs()
	if err != nil {
		return nil, err
	}
	return simconfig.Compatible(cfgs, t.TraceGPUArch), nil
}

// DefaultSimConfig returns the config a new run of the trace starts with
// (see [simconfig.Default]); false when no config suits it.
func (c *Configs) DefaultSimConfig(t cascade.Trace) (cascade.SimConfig, bool, error) {
	cfgs, err := c.SimConfigs()
	if err != nil {
		return cascade.SimConfig{}, false, err
	}
	sc, ok := simconfig.Default(cfgs, t.TraceGPUArch, cascade.Deref(t.SuggestedSimConfig))
	return sc, ok, nil
}

// SimConfigs lists the tested configs, read anew on each call so a config
// added to the directory shows without a restart. A missing directory
// lists none.
func (c *Configs) SimConfigs() ([]cascade.SimConfig, error) {
	if c.cfg.ConfigsDir == "" {
		return nil, nil
	}
	load := simconfig.Load
	if c.cfg.TraceConfigsDir != "" {
		load = func(dir string) ([]cascade.SimConfig, error) { return simconfig.LoadPaired(dir, c.cfg.TraceConfigsDir) }
	}
	cfgs, err := load(c.cfg.ConfigsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return c.refused(cfgs), nil
}

// config finds a usable config.
func (c *Configs) find(name string) (cascade.SimConfig, error) {
	cfgs, err := c.SimConfigs()
	if err != nil {
		return cascade.SimConfig{}, err
	}
	sc, ok := simconfig.Find(cfgs, name)
	switch {
	case !ok:
		return sc, cascade.Errorf(cascade.EINVALID, "simConfig: %s", simconfig.Unknown(cfgs, name))
	case !sc.Usable():
		return sc, cascade.Errorf(cascade.EINVALID, "simConfig: %s cannot be used: %s", name, sc.Err)
	}
	return sc, nil
}

// CrossArchitecture reports whether the run simulates its trace on another
// architecture than the trace was taken on; false when its config is gone.
func (c *Configs) CrossArchitecture(ctx context.Context, r cascade.Run) (bool, error) {
	t, err := c.cfg.Store.Trace(ctx, r.TraceID)
	if err != nil {
		return false, err
	}
	cfgs, err := c.SimConfigs()
	if err != nil {
		return false, err
	}
	sc, ok := simconfig.Find(cfgs, r.BaseConfig())
	return ok && simconfig.CrossArchitecture(sc, t.TraceGPUArch), nil
}

// Gone is how a config that left the configs directory is said to be
// gone, naming the variable the user set: CASCADE_SIM_CONFIGS_DIR, or
// CASCADE_ACCELSIM_DIR, whose checkout's tested configs are read when it
// is set alone (TraceConfigsDir is set only then).
func (c *Configs) Gone() string {
	if c.cfg.TraceConfigsDir != "" {
		return "no longer among the tested configs of CASCADE_ACCELSIM_DIR's checkout (" + c.cfg.ConfigsDir + ")"
	}
	return "no longer in CASCADE_SIM_CONFIGS_DIR (" + c.cfg.ConfigsDir + ")"
}

// SimConfigWarnings says what is wrong with the trace's
// suggested_sim_config against the tested configs: a name that is none
// of theirs, with those it most likely meant or else those there are
// (simconfig.Unknown). None without a suggestion, without configs, or
// when they cannot be read (the configs query says why).
func (c *Configs) SimConfigWarnings(t cascade.Trace) []string {
	name := cascade.Deref(t.SuggestedSimConfig)
	if name == "" {
		return nil
	}
	cfgs, err := c.SimConfigs()
	if err != nil || len(cfgs) == 0 {
		return nil
	}
	sc, ok := simconfig.Suggested(cfgs, name)
	switch {
	case !ok:
		return []string{fmt.Sprintf("metadata.json: suggested_sim_config: %s; the New run screen preselects the first compatible config instead", simconfig.Unknown(cfgs, name))}
	case sc.Name != name:
		return []string{fmt.Sprintf("metadata.json: suggested_sim_config: no config %q; the New run screen preselects %q, its name in another case", name, sc.Name)}
	case simconfig.CrossArchitecture(sc, t.TraceGPUArch):
		return []string{fmt.Sprintf("metadata.json: suggested_sim_config: %s is a compute capability %s config and the trace is %s: its runs simulate the trace on another architecture than it was taken on",
			sc.Name, sc.ComputeCapability, t.TraceGPUArch)}
	}
	return nil
}
