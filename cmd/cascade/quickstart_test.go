package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
)

var fence = regexp.MustCompile("(?ms)^```sh (quickstart(?:-server)?)\n(.*?)^```")

// TestReadmeQuickstart runs the README's quickstart as a new user does: in
// a fresh copy of the repository, from a shell with no CASCADE_* variable
// but those the README's lines set, the server block verbatim but for the
// port (a flag of scripts/serve.sh), so the server runs on its defaults:
// the web UI built by serve.sh, data in the relative ./cascade-data.
// Chromium must show the seeded sample trace; then every other block must
// succeed, in order, and the last one print a finished comparison.
func TestReadmeQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the repository, builds the UI and binaries, runs the whole quickstart")
	}
	t.Parallel()
	clone := freshClone(t, testkit.ModuleRoot())
	readme, err := os.ReadFile(filepath.Join(clone, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var server string
	var steps []string
	for _, m := range fence.FindAllStringSubmatch(string(readme), -1) {
		if m[1] == "quickstart-server" {
			server = m[2]
		} else {
			steps = append(steps, m[2])
		}
	}
	if strings.Count(server, "scripts/serve.sh") != 1 || len(steps) < 3 {
		t.Fatalf("README has %d quickstart blocks and server block %q, which must run scripts/serve.sh once", len(steps), server)
	}
	// Port 0: the kernel picks a free port and the server prints it. (A
	// port picked by the test and freed before serve.sh's minutes of building
	// can be taken meanwhile by any other server on the machine.)
	server = strings.Replace(server, "scripts/serve.sh", "scripts/serve.sh --addr 127.0.0.1:0", 1)
	env := userEnv()

	// serve.sh builds the UI (npm ci, vite) and the server in the fresh copy first.
	addr := startServer(t, clone, env, server)
	for i := range steps {
		steps[i] = strings.ReplaceAll(steps[i], "127.0.0.1:8080", addr)
	}
	if _, err := os.Stat(filepath.Join(clone, "cascade-data", "cascade.db")); err != nil {
		t.Fatalf("the server is not on its default data directory: %v", err)
	}

	row := runIn(t, filepath.Join(clone, "frontend"), env, "node", "e2e/see-trace.mjs", "http://"+addr, "sample", "READY")
	t.Logf("Chromium shows the sample trace: %s", row)

	var last string
	for i, step := range steps {
		out, err := output(clone, env, "bash", "-euo", "pipefail", "-c", step)
		if err != nil {
			t.Fatalf("quickstart step %d failed: %v\n%s\noutput:\n%s", i+1, err, step, out)
		}
		last = out
	}
	for _, want := range []string{`"state":"SUCCEEDED"`, `"kernelsCompared":4`, `"steps":[{`} {
		if !strings.Contains(last, want) {
			t.Fatalf("last step's output lacks %s:\n%s", want, last)
		}
	}
	fmt.Fprintln(os.Stderr, "quickstart result:", last)

	// Started from another directory, serve.sh keeps it: relative paths
	// mean there, as they do for `cascade upload`.
	t.Run("ServeShFromAnotherDirectory", func(t *testing.T) {
		wd := t.TempDir()
		startServer(t, wd, userEnv("CASCADE_DATA_DIR=data"), filepath.Join(clone, "scripts", "serve.sh")+" --addr 127.0.0.1:0")
		if _, err := os.Stat(filepath.Join(wd, "data", "cascade.db")); err != nil {
			t.Fatalf("CASCADE_DATA_DIR=data is not under the directory serve.sh started in: %v", err)
		}
	})
}

// serving is the line cascade serve prints once it listens.
var serving = regexp.MustCompile(`cascade: serving http://(\S+) `)

// startServer runs script with bash in dir, in its own process group, until
// the test ends, waits until the server it starts prints where it serves
// and answers there, and returns that address. Its output is logged if the
// test fails.
func startServer(t *testing.T, dir string, env []string, script string) (addr string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	srv := exec.Command("bash", "-euo", "pipefail", "-c", script)
	srv.Dir, srv.Env = dir, env
	srv.Stdout, srv.Stderr = logFile, logFile
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait(); logFile.Close() }()
	t.Cleanup(func() {
		syscall.Kill(-srv.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			t.Errorf("server did not stop on SIGINT")
		}
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("server output:\n%s", out)
		}
	})
	testkit.Eventually(t, 10*time.Minute, "server up", func() bool {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s: exited before serving: %v", script, err)
		default:
		}
		if addr == "" {
			out, _ := os.ReadFile(logPath)
			m := serving.FindSubmatch(out)
			if m == nil {
				return false
			}
			addr = string(m[1])
		}
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	return addr
}

// runIn runs a command in dir, at most two minutes, and returns its output;
// a failure fails the test.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := output(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func output(dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// freshClone copies into a new directory the files a clone of the
// repository at root would have if its work tree were committed: every
// tracked file and every untracked one that is not ignored, as they are in
// the work tree. So a test runs what would be committed, and nothing that
// a clone lacks (frontend/dist, node_modules, bin, cascade-data) helps it.
func freshClone(t *testing.T, root string) string {
	t.Helper()
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("list the repository's files: %v", err)
	}
	dst := t.TempDir()
	for rel := range strings.SplitSeq(strings.TrimRight(string(list), "\x00"), "\x00") {
		src, to := filepath.Join(root, rel), filepath.Join(dst, rel)
		fi, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted, not yet committed
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err == nil {
				err = os.Symlink(target, to)
			}
			if err != nil {
				t.Fatal(err)
			}
		case fi.Mode().IsRegular():
			if err := copyFile(src, to, fi.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dst
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
