package simconfigtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cascade-sim/cascade/samples"
)

// The tested configs this package can write, with what [simconfig.Load]
// reads from them.
const (
	H100    = "SM90_H100"    // compute capability 9.0, core clock 1755 MHz
	RTX3070 = "SM86_RTX3070" // compute capability 8.6, core clock 1132 MHz
	QV100   = "SM7_QV100"    // compute capability 7.0, core clock 1132 MHz
	// TitanX is compute capability 6.1, core clock 1417 MHz; its
	// gpgpusim.config names config_pascal_islip.icnt by a relative path.
	TitanX = "SM6_TITANX"
)

// Names lists every config this package can write, sorted.
func Names() []string { return []string{TitanX, QV100, RTX3070, H100} }

// Write copies the named configs (all of [Names] when none are given) into
// dir, one subdirectory each with every file of the config, and returns dir. It fails the test on any
// error.
func Write(tb testing.TB, dir string, names ...string) string {
	tb.Helper()
	if len(names) == 0 {
		names = Names()
	}
	for _, name := range names {
		files, err := fs.ReadDir(samples.SimConfigs, "sim-configs/"+name)
		if err != nil {
			tb.Fatalf("simconfigtest: unknown config %q: %v", name, err)
		}
		for _, f := range files {
			data, err := fs.ReadFile(samples.SimConfigs, "sim-configs/"+name+"/"+f.Name())
			if err != nil {
				tb.Fatal(err)
			}
			WriteFile(tb, filepath.Join(dir, name, f.Name()), string(data))
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
