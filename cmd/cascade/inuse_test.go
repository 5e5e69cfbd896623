package main

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
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
