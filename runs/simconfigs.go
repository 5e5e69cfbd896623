package runs

import (
	"fmt"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// RunSimConfig returns the config a run was launched with; one that has
// left the configs directory since comes back with only its name and an
// Err saying so.
func (m *Manager) RunSimConfig(r cascade.Run) (cascade.SimConfig, error) {
	cfgs, err := m.SimConfigs()
	if err != nil {
		return cascade.SimConfig{}, err
	}
	if c, ok := simconfig.Find(cfgs, r.SimConfig); ok {
		return c, nil
	}
	return cascade.SimConfig{Name: r.SimConfig, Err: "no longer in CASCADE_SIM_CONFIGS_DIR"}, nil
}

// CompatibleSimConfigs returns the configs of the architecture the trace
// was taken on (see [simconfig.Compatible]).
func (m *Manager) CompatibleSimConfigs(t cascade.Trace) ([]cascade.SimConfig, error) {
	cfgs, err := m.SimConfigs()
	if err != nil {
		return nil, err
	}
	return simconfig.Compatible(cfgs, t.TraceGPUArch), nil
}

// DefaultSimConfig returns the config a new run of the trace starts with
// (see [simconfig.Default]); false when no config suits it.
func (m *Manager) DefaultSimConfig(t cascade.Trace) (cascade.SimConfig, bool, error) {
	cfgs, err := m.SimConfigs()
	if err != nil {
		return cascade.SimConfig{}, false, err
	}
	c, ok := simconfig.Default(cfgs, t.TraceGPUArch, cascade.Deref(t.SuggestedSimConfig))
	return c, ok, nil
}

// SimConfigWarnings says what is wrong with the trace's
// suggested_sim_config against the tested configs: a name that is none
// of theirs, with those it most likely meant or else those there are
// (simconfig.Unknown). None without a
// suggestion, without configs, or when they cannot be read (the configs
// query says why).
func (m *Manager) SimConfigWarnings(t cascade.Trace) []string {
	name := cascade.Deref(t.SuggestedSimConfig)
	if name == "" {
		return nil
	}
	cfgs, err := m.SimConfigs()
	if err != nil || len(cfgs) == 0 {
		return nil
	}
	if _, ok := simconfig.Find(cfgs, name); ok {
		return nil
	}
	return []string{fmt.Sprintf("metadata.json: suggested_sim_config: %s; the New run screen preselects the first compatible config instead", simconfig.Unknown(cfgs, name))}
}
