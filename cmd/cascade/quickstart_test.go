package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/internal/testutil"
)

var fence = regexp.MustCompile("(?ms)^```sh (quickstart(?:-server)?)\n(.*?)^```")

// TestReadmeQuickstart runs the README's quickstart, verbatim but for the
// port, in order, against a fresh data directory: the server block in the
// background, then each other block, which must succeed.
func TestReadmeQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries and runs the whole quickstart")
	}
	root := testutil.ModuleRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var server string
	var steps []string
	for _, m := range fence.FindAllStringSubmatch(string(readme), -1) {
		block := strings.ReplaceAll(m[2], "127.0.0.1:8080", addr)
		if m[1] == "quickstart-server" {
			server = block
		} else {
			steps = append(steps, block)
		}
	}
	if server == "" || len(steps) < 3 {
		t.Fatalf("README has %d quickstart blocks and server block %q", len(steps), server)
	}
	env := append(os.Environ(), "CASCADE_DATA_DIR="+t.TempDir(), "CASCADE_ADDR="+addr, "CASCADE_UI_BUILD=0")

	srv := exec.Command("bash", "-euo", "pipefail", "-c", server)
	srv.Dir, srv.Env = root, env
	var srvOut strings.Builder
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-srv.Process.Pid, syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- srv.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			t.Errorf("server did not stop on SIGINT")
		}
		if t.Failed() {
			t.Logf("server output:\n%s", srvOut.String())
		}
	}()
	testutil.Eventually(t, 3*time.Minute, "server up", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	var last string
	for i, step := range steps {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", step)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("quickstart step %d failed: %v\n%s\noutput:\n%s", i+1, err, step, out)
		}
		last = string(out)
	}
	for _, want := range []string{`"state":"SUCCEEDED"`, `"kernelsCompared":4`, `"steps":[{`} {
		if !strings.Contains(last, want) {
			t.Fatalf("last step's output lacks %s:\n%s", want, last)
		}
	}
	fmt.Fprintln(os.Stderr, "quickstart result:", last)
}
