package servertests_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// The clients users run, from Debian's packages (scripts/deps.sh installs
// them). A machine without them skips these tests, except in CI.
func needTool(t *testing.T, name string) {
	t.Helper()
	testkit.SkipShort(t, "runs "+name)
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; scripts/deps.sh installs it", name)
		}
		t.Skipf("%s is not installed; run scripts/deps.sh", name)
	}
}

func needBoto3(t *testing.T) {
	t.Helper()
	needTool(t, "python3")
	if out, err := exec.Command("python3", "-c", "import boto3").CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3 cannot import boto3 (%v: %s); scripts/deps.sh installs python3-boto3", err, out)
		}
		t.Skipf("python3 cannot import boto3; run scripts/deps.sh")
	}
}

// clientEnv is a clean environment for a client: its own HOME, no
// rclone.conf, no AWS profile, and the test keys in the usual variables.
func clientEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"RCLONE_CONFIG=" + filepath.Join(home, "rclone.conf"),
		"AWS_CONFIG_FILE=" + filepath.Join(home, "aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "aws-credentials"),
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ACCESS_KEY_ID=" + s3test.Keys.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s3test.Keys.SecretKey,
		"AWS_DEFAULT_REGION=us-east-1",
	}
}

// runIn runs a command in dir with env and returns its combined output.
func runIn(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// quickstartCopy copies the quickstart trace to <tmp>/my-trace and returns
// <tmp>.
func quickstartCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "my-trace"), os.DirFS(filepath.Join(testkit.ModuleRoot(), "samples", "quickstart"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// watchTrace subscribes to a trace's updates; the returned func waits
// until it is READY and returns the states it went through.
func watchTrace(t *testing.T, s *servertest.TestServer, id string) func() []string {
	t.Helper()
	sub := s.Subscribe(t, "graphql-transport-ws",
		`subscription($id: ID!) { traceUpdated(id: $id) { state kernelCount error } }`, map[string]any{"id": id})
	return func() []string {
		t.Helper()
		var states []string
		for {
			var r struct {
				TraceUpdated struct {
					State       string
					KernelCount int
					Error       *string
				}
			}
			if err := sub.Next(30*time.Second, &r); err != nil {
				t.Fatalf("trace %s after %v: %v", id, states, err)
			}
			u := r.TraceUpdated
			if len(states) == 0 || states[len(states)-1] != u.State {
				states = append(states, u.State)
			}
			switch u.State {
			case "READY":
				if u.KernelCount != 4 {
					t.Fatalf("ready with %d kernels, want 4", u.KernelCount)
				}
				// It goes the lifecycle's way: uploading (unless the
				// upload was whole by the scanner's first look, which a
				// 4-kernel trace can be on a busy machine), processing,
				// ready; nothing else, nothing twice.
				want := []string{"UPLOADING", "PROCESSING", "READY"}
				if states[0] != "UPLOADING" {
					want = want[1:]
				}
				if !slices.Equal(states, want) {
					t.Fatalf("states %v, want %v", states, want)
				}
				return states
			case "FAILED":
				t.Fatalf("trace failed after %v: %v", states, *u.Error)
			}
		}
	}
}

type endpointAnswer struct {
	S3Endpoint *struct {
		URL, Bucket, Prefix, AccessKeyID, SecretAccessKey     string
		EnvCommand, AWSCommand, RcloneCommand, CascadeCommand string
	}
}

func queryEndpoint(t *testing.T, s *servertest.TestServer) endpointAnswer {
	t.Helper()
	var r endpointAnswer
	s.MustDo(t, `{ s3Endpoint { url bucket prefix accessKeyId secretAccessKey envCommand awsCommand rcloneCommand cascadeCommand } }`, nil, &r)
	if r.S3Endpoint == nil {
		t.Fatal("s3Endpoint is null on a server with an S3 endpoint")
	}
	return r
}

// TestPrintedCommandsUploadATrace runs each upload command the server
// offers (the lines it prints at start and the Traces screen shows) as a
// user pastes it into a shell, with the real client, and follows the
// trace over a websocket from UPLOADING to READY. The folder holds the
// dotfiles a Mac or an editor leaves (.DS_Store, a .git directory): the
// command still succeeds, and they count for nothing in the trace.
func TestPrintedCommandsUploadATrace(t *testing.T) {
	for _, c := range []struct{ name, tool string }{{"aws", "aws"}, {"rclone", "rclone"}, {"cascade", ""}} {
		t.Run(c.name, func(t *testing.T) {
			env := clientEnv(t)
			if c.tool != "" {
				needTool(t, c.tool)
			} else {
				bin := testkit.Program(t, "./cmd/cascade")
				env[0] = "PATH=" + filepath.Dir(bin) + ":" + os.Getenv("PATH")
			}
			s := servertest.Server(t, s3test.WithS3)
			e := queryEndpoint(t, s).S3Endpoint
			if e.URL != s.S3.URL || e.Bucket != "cascade" || e.Prefix != "traces" || e.AccessKeyID != s3test.Keys.AccessKey || e.SecretAccessKey != s3test.Keys.SecretKey {
				t.Fatalf("s3Endpoint %+v", e)
			}
			line := map[string]string{"aws": e.AWSCommand, "rclone": e.RcloneCommand, "cascade": e.CascadeCommand}[c.name]
			dir := quickstartCopy(t)
			dots := []string{".DS_Store", "traces/.DS_Store", ".git/HEAD"}
			for _, rel := range dots {
				p := filepath.Join(dir, "my-trace", filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, bytes.Repeat([]byte("."), 1000), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wait := watchTrace(t, s, "my-trace")
			// The user's shell has no AWS keys until they paste envCommand.
			out, err := runIn(dir, env[:3], "sh", "-c", e.EnvCommand+" && "+line)
			if err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			t.Logf("%s -> %v", c.name, wait())
			got, err := os.ReadFile(filepath.Join(s.TraceDir("my-trace"), "traces", "kernelslist.g"))
			want, _ := os.ReadFile(filepath.Join(dir, "my-trace", "traces", "kernelslist.g"))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("kernelslist.g in the bucket directory: %v, %d bytes, want %d", err, len(got), len(want))
			}
			// The trace's bytes are its files', the dotfiles left out.
			var r struct{ Trace struct{ Bytes int64 } }
			s.MustDo(t, `query($id: ID!) { trace(id: $id) { bytes } }`, map[string]any{"id": "my-trace"}, &r)
			if want := treeBytes(t, s.TraceDir("my-trace")); r.Trace.Bytes != want {
				t.Errorf("trace bytes %v, want %d (its files, the dotfiles left out)", r.Trace.Bytes, want)
			}
			// The S3 clients store the dotfiles as they are; cascade upload
			// leaves them out.
			for _, rel := range dots {
				_, err := os.Stat(filepath.Join(s.TraceDir("my-trace"), filepath.FromSlash(rel)))
				if stored := err == nil; stored != (c.tool != "") {
					t.Errorf("%s in the bucket directory: %v", rel, err)
				}
			}
			// The gateway's own files (locks, staging) are all where the
			// scanner does not look.
			for _, rel := range visible(files(t, filepath.Join(s.DataDir, "s3"))) {
				if !strings.HasPrefix(rel, "cascade/traces/my-trace/") {
					t.Errorf("visible outside the trace: %s", rel)
				}
			}
		})
	}
}

// TestBoto3UploadsATrace uploads a trace with a 20 MB kernel with boto3's
// managed transfer, which sends it as a multipart upload with parallel
// parts, data files before metadata.json.
func TestBoto3UploadsATrace(t *testing.T) {
	needBoto3(t)
	s := servertest.Server(t, s3test.WithS3)
	dir := quickstartCopy(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 20<<20/16)
	if err := os.WriteFile(filepath.Join(dir, "my-trace", "traces", "kernel-5-ctx_0x55d2c3a1e4f0.trace"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	wait := watchTrace(t, s, "my-trace")
	script := filepath.Join(testkit.ModuleRoot(), "s3gw", "testdata", "boto3_upload.py")
	out, err := runIn(dir, clientEnv(t), "python3", script, s.S3.URL, "cascade", "traces/my-trace", "my-trace")
	if err != nil {
		t.Fatalf("boto3: %v\n%s", err, out)
	}
	if !strings.HasSuffix(strings.TrimSpace(out), "uploaded metadata.json") {
		t.Fatalf("metadata.json was not uploaded last:\n%s", out)
	}
	t.Logf("boto3 -> %v", wait())
	got, err := os.ReadFile(filepath.Join(s.TraceDir("my-trace"), "traces", "kernel-5-ctx_0x55d2c3a1e4f0.trace"))
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("the 20 MB kernel in the bucket directory: %v, %d bytes", err, len(got))
	}
}

// treeBytes is the size of the regular files under root, dotfiles and dot
// directories left out.
func treeBytes(t *testing.T, root string) int64 {
	t.Helper()
	var n int64
	for rel, size := range files(t, root) {
		if !strings.HasPrefix(rel, ".") && !strings.Contains(rel, "/.") {
			n += size
		}
	}
	return n
}
