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
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/simconfig"
	"github.com/cascade-sim/cascade/tracedir"
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
	files, err := configFiles(cfg, reserved...)
	if err != nil {
		return err
	}
	for _, f := range files {
		err := os.Symlink(f.path, filepath.Join(dir, f.name))
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("link config %s file %s into the run directory: %w", cfg.Name, f.name, err)
		}
	}
	return nil
}

// configFile is one entry of a config's folders: its name, and its path
// in the folder it is taken from.
type configFile struct{ name, path string }

// configFiles lists the entries of the tested-config folders the config's
// two files come from, as [linkConfigFolders] links them, sorted by name:
// a name two folders hold is the first folder's (gpgpusim.config's), and
// reserved names and dotfiles are left out.
func configFiles(cfg cascade.SimConfig, reserved ...string) ([]configFile, error) {
	seen := map[string]bool{}
	names := map[string]bool{}
	var files []configFile
	for _, file := range []string{simconfig.GPGPUSimPath(cfg), simconfig.TracePath(cfg)} {
		real, err := filepath.EvalSymlinks(file)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", cfg.Name, err)
		}
		folder, err := filepath.Abs(filepath.Dir(real))
		if err != nil {
			return nil, err
		}
		if seen[folder] {
			continue
		}
		seen[folder] = true
		entries, err := os.ReadDir(folder)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", cfg.Name, err)
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || slices.Contains(reserved, name) || names[name] {
				continue
			}
			names[name] = true
			files = append(files, configFile{name: name, path: filepath.Join(folder, name)})
		}
	}
	slices.SortFunc(files, func(a, b configFile) int { return strings.Compare(a.name, b.name) })
	return files, nil
}

// rawTraceFix says why a simulator rejected file, a raw NVBit trace that
// the trace's kernelslist.g names, and what to do: an upload brought that
// list (Cascade post-processes a trace without one), and no Accel-Sim
// reads raw traces.
func rawTraceFix(file, traceID string) string {
	return fmt.Sprintf("%s is a raw NVBit trace, which no Accel-Sim reads: the trace's traces/kernelslist.g, which came with its upload, "+
		"names raw traces instead of the post-processor's. Upload the trace again without traces/kernelslist.g, with the tracer's "+
		"traces/kernelslist (or kernelslist_ctx_*), or call retryTrace(id: %q) if the upload has it: Cascade then post-processes the raw traces", file, traceID)
}

// traceFormatFix says how to serve a simulator that rejected a trace's
// file type (formats.md §6).
func traceFormatFix(traceID string) string {
	return fmt.Sprintf("Accel-Sim 1.x (its public dev branch) reads .traceg and .traceg.xz only; .tracez needs Accel-Sim 2.0. "+
		"Set CASCADE_TRACE_FORMAT=traceg (or CASCADE_ACCELSIM_DIR, which picks the format the checkout reads), restart the server, "+
		"then call retryTrace(id: %q) to post-process the trace again in that format", traceID)
}

// missingFix names, for a kernel list whose kernel lines name files that
// are not on disk, the trace and its list, and what to do: the trace's
// files changed after it was post-processed (a file deleted from the
// bucket). Any other error is returned as it is.
func missingFix(err error, traceID string) error {
	var m *kernellist.MissingFilesError
	if !errors.As(err, &m) {
		return err
	}
	named := *m
	named.List = tracedir.KernelsListG
	return fmt.Errorf("trace %q: %w: its files changed after it was post-processed. Upload the missing files again, "+
		"or call retryTrace(id: %q) to post-process its raw traces again", traceID, &named, traceID)
}

// preparedEnd is how a run whose preparation failed with err ends: FAILED
// with err, and for kernel files that are not on disk (missingFix) the
// failure class the simulator's own message would have had
// (MISSING_TRACE_FILE), the list's line as its failure line.
func preparedEnd(err error) End {
	end := End{State: cascade.RunFailed, Error: err.Error()}
	var m *kernellist.MissingFilesError
	if errors.As(err, &m) {
		line := m.Error()
		end.Also = func(r *cascade.Run) { r.FailureClass, r.FailureLine = cascade.FailureMissingTrace, line }
	}
	return end
}
