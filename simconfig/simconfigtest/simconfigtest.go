// Package simconfigtest writes realistic Accel-Sim tested-config directories
// for tests: excerpts of the real SM90_H100, SM86_RTX3070 and SM7_QV100
// gpgpusim.config and trace.config files, comments and all, kept in
// samples/sim-configs (which the quickstart uses too).
package simconfigtest

import (
	"github.com/cascade-sim/cascade/samples"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The tested configs this package can write, with what [simconfig.Load]
// reads from them.
const (
	H100    = "SM90_H100"    // compute capability 9.0, core clock 1755 MHz
	RTX3070 = "SM86_RTX3070" // compute capability 8.6, core clock 1132 MHz
	QV100   = "SM7_QV100"    // compute capability 7.0, core clock 1132 MHz
)

// Names lists every config this package can write, sorted.
func Names() []string { return []string{QV100, RTX3070, H100} }

// Write copies the named configs (all of [Names] when none are given) into
// dir, one subdirectory each, and returns dir. It fails the test on any
// error.
func Write(tb testing.TB, dir string, names ...string) string {
	tb.Helper()
	if len(names) == 0 {
		names = Names()
	}
	for _, name := range names {
		for _, file := range []string{"gpgpusim.config", "trace.config"} {
			data, err := fs.ReadFile(samples.SimConfigs, "sim-configs/"+name+"/"+file)
			if err != nil {
				tb.Fatalf("simconfigtest: unknown config %q: %v", name, err)
			}
			WriteFile(tb, filepath.Join(dir, name, file), string(data))
		}
	}
	return dir
}

// WriteFile writes text to path, creating its directory, and fails the test
// on error. Tests use it for broken configs.
func WriteFile(tb testing.TB, path, text string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}
