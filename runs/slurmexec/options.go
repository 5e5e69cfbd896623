package slurmexec

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/slurm"
)

// OptionsFile is the file in a tested-config folder (next to its
// gpgpusim.config, as CASCADE_SIM_CONFIGS_DIR shows it) that sets the Slurm
// job options of that config's runs, over the global ones, in the format
// [slurm.ReadOptions] reads:
//
//	# SM90_H100 simulates for hours and needs more memory
//	partition=long
//	time=12:00:00
//	mem=16G
const OptionsFile = "cascade-slurm.conf"

// ConfigOptions reads the OptionsFile of a config's folder; a folder
// without one sets nothing.
func ConfigOptions(cfg cascade.SimConfig) (slurm.Options, error) {
	path := filepath.Join(filepath.Dir(simconfig.GPGPUSimPath(cfg)), OptionsFile)
	o, err := slurm.ReadOptions(path)
	if errors.Is(err, fs.ErrNotExist) {
		return slurm.Options{}, nil
	}
	return o, err
}

// CheckConfig implements [runs.Executor]: a config whose OptionsFile does
// not read starts no job; the error names the file, line and option.
func (*Executor) CheckConfig(cfg cascade.SimConfig) error {
	_, err := ConfigOptions(cfg)
	return err
}
