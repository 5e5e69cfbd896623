package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
)

// TestServeScriptSaysItBuilds: scripts/serve.sh was silent for minutes
// while the first go build ran, after the web UI's "built in 6.31s". It
// says it is building the server, that the first time takes minutes, and
// when it is done. Run with a stand-in go on PATH whose "build" writes a
// bin/cascade that prints its arguments.
func TestServeScriptSaysItBuilds(t *testing.T) {
	testkit.SkipShort(t, "runs scripts/serve.sh, a shell and stand-in commands")
	root := t.TempDir()
	script, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(), "scripts", "serve.sh"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteTree(t, root, map[string]string{"scripts/serve.sh": string(script)})
	if err := os.Chmod(filepath.Join(root, "scripts", "serve.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	tools := t.TempDir()
	goStub := "#!/bin/sh\nprintf '#!/bin/sh\\necho ran \"$@\"\\n' > bin/cascade && chmod +x bin/cascade\n"
	if err := os.WriteFile(filepath.Join(tools, "go"), []byte(goStub), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func() (string, string) {
		cmd := exec.Command(filepath.Join(root, "scripts", "serve.sh"), "--addr", "x")
		cmd.Env = append(os.Environ(), "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"), "CASCADE_UI_BUILD=0")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("serve.sh: %v\n%s", err, stderr.String())
		}
		return string(out), stderr.String()
	}
	out, stderr := run()
	if out != "ran serve --addr x\n" {
		t.Errorf("stdout %q: the server was not started with the arguments", out)
	}
	for _, want := range []string{"building the server (bin/cascade; the first time takes a few minutes", "built the server in "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("first start's stderr %q\nwant %q", stderr, want)
		}
	}
	if _, stderr = run(); !strings.Contains(stderr, "building the server (bin/cascade)...") || strings.Contains(stderr, "first time") {
		t.Errorf("second start's stderr %q: want building, not the first time's minutes", stderr)
	}
}
