package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestAddressInUse: a second server on the first one's port says that a
// Cascade server already runs there and which setting picks another port;
// an S3 port some other program holds is named as such.
func TestAddressInUse(t *testing.T) {
	addr, _, _ := testkit.ServeProcess(t, t.TempDir())
	_, port, _ := net.SplitHostPort(addr)
	var next int
	fmt.Sscan(port, &next)
	next++

	second := func(env ...string) (string, error) {
		cmd := exec.Command(testkit.Program(t, "./cmd/cascade"), "serve")
		cmd.Env = append(cmd.Environ(), append([]string{"CASCADE_DATA_DIR=" + t.TempDir()}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := second("CASCADE_ADDR="+addr, "CASCADE_S3_ADDR=off")
	want := fmt.Sprintf("cascade serve: cannot start: the API's address %s is in use: another Cascade server is already running there (http://%s/healthz answers); stop it, or start this one on another port with --addr 127.0.0.1:%d (CASCADE_ADDR)", addr, addr, next)
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("second server: %v\n%s\nwant a line %q", err, out, want)
	}

	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	out, err = second("CASCADE_ADDR=127.0.0.1:0", "CASCADE_S3_ADDR="+held.Addr().String())
	want = "the S3 endpoint's address " + held.Addr().String() + " is in use: another program listens there; stop it, or start this one on another port with --s3-addr"
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("S3 port held: %v\n%s\nwant %q", err, out, want)
	}
}

// TestDataInUse: a second server on the first one's data directory (on
// other ports), on its SQLite file, or on its PostgreSQL database, refuses to start, saying
// which server holds it, and the first goes on serving: a second server
// once requeued the first one's running run, deleted its work directory
// and, on PostgreSQL, removed every trace its own bucket lacked.
func TestDataInUse(t *testing.T) {
	t.Parallel()
	second := func(dataDir string, env ...string) (string, error) {
		cmd := exec.Command(testkit.Program(t, "./cmd/cascade"), "serve")
		cmd.Env = append(cmd.Environ(), append([]string{"CASCADE_DATA_DIR=" + dataDir, "CASCADE_ADDR=127.0.0.1:0", "CASCADE_S3_ADDR=off"}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	healthy := func(addr string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatalf("the first server after the refusal: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the first server after the refusal: /healthz %d", resp.StatusCode)
		}
	}

	dir := t.TempDir()
	addr, first, _ := testkit.ServeProcess(t, dir)
	out, err := second(dir)
	want := fmt.Sprintf("the data directory %s is in use by another Cascade server (pid %d, http://%s): stop it, or give this one another data directory (--data-dir, CASCADE_DATA_DIR)", dir, first.Process.Pid, addr)
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("second server on the data directory: %v\n%s\nwant a line %q", err, out, want)
	}
	healthy(addr)
	t.Log(strings.TrimSpace(out))

	// An SQLite file outside the data directories, named by both servers.
	dbFile := filepath.Join(t.TempDir(), "cascade.db")
	addr, first, _ = testkit.ServeProcess(t, t.TempDir(), "CASCADE_DATABASE_URL=sqlite://"+dbFile)
	out, err = second(t.TempDir(), "CASCADE_DATABASE_URL=sqlite://"+dbFile)
	want = fmt.Sprintf("the database is in use by another Cascade server (%s; its lock %s.lock is held by pid %d): stop that server, or give this one another database (CASCADE_DATABASE_URL)", dbFile, dbFile, first.Process.Pid)
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("second server on the SQLite file: %v\n%s\nwant a line %q", err, out, want)
	}
	healthy(addr)
	t.Log(strings.TrimSpace(out))

	dsn := os.Getenv(dbtest.PostgresEnv)
	if dsn == "" {
		t.Log("PostgreSQL not checked: " + dbtest.PostgresEnv + " is not set")
		return
	}
	url := dbtest.PostgresSchema(t, dsn)
	addr, _, _ = testkit.ServeProcess(t, t.TempDir(), "CASCADE_DATABASE_URL="+url)
	out, err = second(t.TempDir(), "CASCADE_DATABASE_URL="+url)
	if err == nil || !strings.Contains(out, "the database is in use by another Cascade server (schema ") {
		t.Errorf("second server on the database: %v\n%s", err, out)
	}
	healthy(addr)
	t.Log(strings.TrimSpace(out))
}
