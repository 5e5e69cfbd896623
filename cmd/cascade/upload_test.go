package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

func TestUploadCommand(t *testing.T) {
	src := filepath.Join(t.TempDir(), "from-dir-name")
	testkit.WriteTree(t, src, map[string]string{"traces/kernelslist": "k\n"})
	data := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"upload"}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	// Flags after the directory, as the guide writes the command.
	code, out, errOut := run(src, "--run-name", "cli-run", "--data-dir", data, "--bucket", "b", "--prefix", "p/q")
	dest := filepath.Join(data, "s3", "b", "p", "q", "cli-run")
	if code != 0 || !strings.Contains(out, "uploaded cli-run to "+dest) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if strings.Contains(errOut, "\r") {
		t.Errorf("stderr is not a terminal but got a redrawn bar: %q", errOut)
	}

	code, _, errOut = run("--data-dir", data, "--bucket", "b", "--prefix", "p/q", "--run-name", "cli-run", src)
	if code != 1 || !strings.Contains(errOut, "--force") || !strings.Contains(errOut, dest) {
		t.Errorf("second upload: exit %d, stderr %s", code, errOut)
	}
	if code, _, errOut = run(src, "--run-name", "cli-run", "--data-dir", data, "--bucket", "b", "--prefix", "p/q", "--force"); code != 0 {
		t.Errorf("--force: exit %d, stderr %s", code, errOut)
	}

	to := filepath.Join(t.TempDir(), "exact")
	if code, out, _ = run(src, "--to", to); code != 0 || !strings.Contains(out, "uploaded from-dir-name to "+to) {
		t.Errorf("--to: exit %d, stdout %s", code, out)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no directory", nil, 2, "want one trace directory"},
		{"two directories", []string{src, src}, 2, "have 2 arguments"},
		{"unknown flag", []string{src, "--nope"}, 2, "flag provided but not defined"},
		{"bad run name", []string{src, "--run-name", ".x", "--data-dir", data}, 1, `run name ".x" starts with a dot`},
		{"missing directory", []string{filepath.Join(data, "nope"), "--data-dir", data}, 1, "no such file"},
		{"a trace's traces/ folder", []string{filepath.Join(src, "traces"), "--data-dir", data}, 1, "give its parent, the folder that holds traces/ (and metadata.json): cascade upload " + src},
	} {
		code, _, errOut := run(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d mentioning %q", tc.name, code, errOut, tc.code, tc.want)
		}
	}
}

func TestUploadEnvironment(t *testing.T) {
	data := t.TempDir()
	t.Setenv("CASCADE_DATA_DIR", data)
	t.Setenv("CASCADE_BUCKET", "envbucket")
	t.Setenv("CASCADE_PREFIX", "envprefix")
	src := filepath.Join(t.TempDir(), "envrun")
	testkit.WriteTree(t, src, map[string]string{"f": "x"})
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"upload", src}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := filepath.Join(data, "s3", "envbucket", "envprefix", "envrun"); !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout %q does not name %s", stdout.String(), want)
	}
}

func TestUploadCancelled(t *testing.T) {
	src := t.TempDir()
	testkit.WriteTree(t, src, map[string]string{"f": "x"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"upload", src, "--to", filepath.Join(t.TempDir(), "r")}, &stdout, &stderr); code != 130 {
		t.Errorf("exit %d, want 130; stderr %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "run the same command again to resume") {
		t.Errorf("stderr = %s", stderr.String())
	}
}

// TestServerFollowsAnUpload uploads the quickstart trace with the command
// line into a running server and watches it over a websocket: it appears
// UPLOADING as soon as its first file lands, and becomes ready once the
// command has written the rest and metadata.json with its files list. (The
// first file is written before the command runs: the command writes the
// quickstart's few kilobytes in milliseconds, and an upload complete
// before the server looks is PROCESSING from the start.)
func TestServerFollowsAnUpload(t *testing.T) {
	s := servertest.Server(t)
	sub := s.Subscribe(t, "graphql-transport-ws",
		`subscription { traceUpdated { id state kernelCount bytes hasRealTiming hasStepTimeline } }`, nil)
	// The server registers a subscription after the subscribe message, with
	// no acknowledgement: a trace of its own seen on the subscription shows
	// it is registered before the upload starts.
	s.WriteFile(t, "registered", "metadata.json", []byte(`{}`))
	for {
		var r struct{ TraceUpdated struct{ ID string } }
		if err := sub.Next(10*time.Second, &r); err != nil {
			t.Fatalf("waiting for the subscription to be registered: %v", err)
		}
		if r.TraceUpdated.ID == "registered" {
			break
		}
	}
	src := filepath.Join(testkit.ModuleRoot(), "samples", "quickstart")
	first, err := os.ReadFile(filepath.Join(src, "corrected_timeline.json"))
	if err != nil {
		t.Fatal(err)
	}
	s.WriteFile(t, "qs-upload", "corrected_timeline.json", first)
	var states []string
	uploaded := false
	for {
		var r struct {
			TraceUpdated struct {
				ID                             string
				State                          string
				KernelCount                    int
				Bytes                          int64
				HasRealTiming, HasStepTimeline bool
			}
		}
		if err := sub.Next(10*time.Second, &r); err != nil {
			t.Fatalf("after %v: %v", states, err)
		}
		u := r.TraceUpdated
		if u.ID != "qs-upload" {
			continue
		}
		if len(states) == 0 || states[len(states)-1] != u.State {
			states = append(states, u.State)
		}
		if !uploaded {
			if u.State != "UPLOADING" {
				t.Fatalf("states %v: the trace must appear UPLOADING once its first file lands", states)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"upload", src, "--run-name", "qs-upload", "--data-dir", s.DataDir}, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("upload exited %d: %s", code, stderr.String())
			}
			uploaded = true
			continue
		}
		if u.State == "READY" {
			if u.KernelCount != 4 || !u.HasRealTiming || !u.HasStepTimeline || u.Bytes == 0 {
				t.Fatalf("ready trace: %+v", u)
			}
			break
		}
		if u.State == "FAILED" {
			t.Fatalf("failed: %v", states)
		}
	}
	if !strings.Contains(strings.Join(states, " "), "READY") {
		t.Fatalf("states %v", states)
	}
}
