package runs

import "strings"

// goneFromConfigs is how a config that left the configs directory is said
// to be gone, naming the variable the user set: CASCADE_SIM_CONFIGS_DIR,
// or CASCADE_ACCELSIM_DIR, whose checkout's tested configs are read when
// it is set alone (TraceConfigsDir is set only then).
func (m *Manager) goneFromConfigs() string {
	if m.cfg.TraceConfigsDir != "" {
		return "no longer among the tested configs of CASCADE_ACCELSIM_DIR's checkout (" + m.cfg.ConfigsDir + ")"
	}
	return "no longer in CASCADE_SIM_CONFIGS_DIR (" + m.cfg.ConfigsDir + ")"
}

// sayConfigsPlace rewrites recordedConfig's problem for a config that is
// gone to name the variable the user set (see goneFromConfigs).
func (m *Manager) sayConfigsPlace(problem string) string {
	return strings.Replace(problem, "no longer in CASCADE_SIM_CONFIGS_DIR", m.goneFromConfigs(), 1)
}
