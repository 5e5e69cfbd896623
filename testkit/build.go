package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var programs struct {
	mu    sync.Mutex
	built map[string]string
}

// ModuleRoot is the directory of Cascade's go.mod.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// Program builds the main package pkg (a path relative to the module
// root, "./cmd/cascade") once per test process and returns the binary.
func Program(tb testing.TB, pkg string) string {
	tb.Helper()
	programs.mu.Lock()
	defer programs.mu.Unlock()
	if p, ok := programs.built[pkg]; ok {
		return p
	}
	dir, err := os.MkdirTemp("", "cascade-test-bin-")
	if err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = ModuleRoot()
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build %s: %v\n%s", pkg, err, msg)
	}
	if programs.built == nil {
		programs.built = map[string]string{}
	}
	programs.built[pkg] = out
	return out
}

// FakePostprocessor returns the command line of the stand-in
// post-processor (testkit/fakepp) in the given mode.
func FakePostprocessor(tb testing.TB, mode string, extra ...string) []string {
	tb.Helper()
	return append([]string{Program(tb, "./testkit/fakepp"), fmt.Sprintf("--mode=%s", mode)}, extra...)
}
