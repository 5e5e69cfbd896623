package runs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
)

// linkConfigFolders links every file of the tested-config folders the
// config's two files come from into the run directory dir, as Accel-Sim's
// own launcher copies the whole folder into each run's directory: a
// gpgpusim.config names its side files (-inter_config_file
// config_pascal_islip.icnt, AccelWattch's .xml files) by paths relative to
// the directory the simulator runs in. A config file that is itself a link
// (a folder of links to a checkout) counts from the folder it points into.
// Names the run directory already holds (its kernel list, its kernels'
// links) stay as they are; reserved names (the log, which the simulator's
// output would otherwise write through a link into the folder) and
// dotfiles are skipped.
func linkConfigFolders(dir string, cfg cascade.SimConfig, reserved ...string) error {
	seen := map[string]bool{}
	for _, file := range []string{simconfig.GPGPUSimPath(cfg), simconfig.TracePath(cfg)} {
		real, err := filepath.EvalSymlinks(file)
		if err != nil {
			return fmt.Errorf("config %s: %w", cfg.Name, err)
		}
		folder, err := filepath.Abs(filepath.Dir(real))
		if err != nil {
			return err
		}
		if seen[folder] {
			continue
		}
		seen[folder] = true
		entries, err := os.ReadDir(folder)
		if err != nil {
			return fmt.Errorf("config %s: %w", cfg.Name, err)
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || slices.Contains(reserved, name) {
				continue
			}
			err := os.Symlink(filepath.Join(folder, name), filepath.Join(dir, name))
			if err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("link config %s file %s into the run directory: %w", cfg.Name, name, err)
			}
		}
	}
	return nil
}

// traceFormatFix says how to serve a simulator that rejected a trace's
// file type (formats.md §6).
func traceFormatFix(traceID string) string {
	return fmt.Sprintf("Accel-Sim 1.x (its public dev branch) reads .traceg and .traceg.xz only; .tracez needs Accel-Sim 2.0. "+
		"Set CASCADE_TRACE_FORMAT=traceg (or CASCADE_ACCELSIM_DIR, which picks the format the checkout reads), restart the server, "+
		"then call retryTrace(id: %q) to post-process the trace again in that format", traceID)
}
