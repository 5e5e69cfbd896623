package testkit

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/cascade-sim/cascade/testkit/procdir"
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
// A test that builds a program runs it as a child process: it belongs to
// the full suite, and under go test -short it is skipped here.
func Program(tb testing.TB, pkg string) string {
	tb.Helper()
	SkipShort(tb, "builds and runs "+pkg)
	programs.mu.Lock()
	defer programs.mu.Unlock()
	if p, ok := programs.built[pkg]; ok {
		return p
	}
	dir, err := procdir.New("cascade-test-bin-")
	if err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	// -buildvcs=auto records the commit (cascade --version) even where
	// GOFLAGS says -buildvcs=false, as this machine's go env does.
	cmd := exec.Command("go", "build", "-buildvcs=auto", "-o", out, pkg)
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
