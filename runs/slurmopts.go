package runs

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/slurm"
)

// SlurmOptionsFile is the file in a tested-config folder (next to its
// gpgpusim.config, as CASCADE_SIM_CONFIGS_DIR shows it) that sets the Slurm
// job options of that config's runs, over the global ones, in the format
// [slurm.ReadOptions] reads:
//
//	# SM90_H100 simulates for hours and needs more memory
//	partition=long
//	time=12:00:00
//	mem=16G
const SlurmOptionsFile = "cascade-slurm.conf"

// ConfigSlurmOptions reads the SlurmOptionsFile of a config's folder;
// a folder without one sets nothing.
func ConfigSlurmOptions(cfg cascade.SimConfig) (slurm.Options, error) {
	path := filepath.Join(filepath.Dir(simconfig.GPGPUSimPath(cfg)), SlurmOptionsFile)
	o, err := slurm.ReadOptions(path)
	if errors.Is(err, fs.ErrNotExist) {
		return slurm.Options{}, nil
	}
	return o, err
}
