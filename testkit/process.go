package testkit

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// SyncBuffer is a bytes.Buffer that a process's two output streams write
// and a test reads at the same time.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ServeProcess starts `cascade serve` as a process of its own on a free
// port, with dataDir as its data directory, a 200 ms scan interval, the S3
// endpoint on a free port, and then env (later entries win), and waits
// until /healthz answers 200. CASCADE_* variables of the test's own
// environment are not passed on: the server sees what the test sets. The
// process is killed when the test ends, and its output (out) is logged if
// the test failed. Under go test -short the test is skipped.
func ServeProcess(t testing.TB, dataDir string, env ...string) (addr string, cmd *exec.Cmd, out *SyncBuffer) {
	t.Helper()
	SkipShort(t, "starts cascade serve as a process")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	cmd = exec.Command(Program(t, "./cmd/cascade"), "serve")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CASCADE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "CASCADE_DATA_DIR="+dataDir, "CASCADE_ADDR="+addr, "CASCADE_SCAN_INTERVAL=200ms", "CASCADE_S3_ADDR=127.0.0.1:0")
	cmd.Env = append(cmd.Env, env...)
	out = &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server output:\n%s", out)
		}
	})
	Eventually(t, 60*time.Second, "server up", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	return addr, cmd, out
}
