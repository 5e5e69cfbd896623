package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cascade-sim/cascade/testkit"
)

// openPTY opens a pseudo-terminal: what the server writes to tty, the
// test reads from master.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

var servingLine = regexp.MustCompile(`cascade: serving (http://\S+) `)

// TestLogFormat: the server logs JSON when its stderr is not a terminal
// and text when it is, CASCADE_LOG_FORMAT overriding either; either way
// stdout has the start-up report scripts read, and the log says where the
// server serves as a record of its own.
func TestLogFormat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		terminal bool
		format   string // CASCADE_LOG_FORMAT
		wantJSON bool
	}{
		{"PipeDefault", false, "", true},
		{"PipeText", false, "text", false},
		{"TerminalDefault", true, "", false},
		{"TerminalJSON", true, "json", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(testkit.Program(t, "./cmd/cascade"), "serve")
			cmd.Env = append(os.Environ(), "CASCADE_DATA_DIR="+t.TempDir(), "CASCADE_ADDR=127.0.0.1:0", "CASCADE_S3_ADDR=off", "CASCADE_LOG_FORMAT="+c.format)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr io.Reader
			if c.terminal {
				master, tty := openPTY(t)
				cmd.Stderr, stderr = tty, master
			} else {
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer pr.Close()
				cmd.Stderr, stderr = pw, pr
				defer pw.Close()
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
			lines := make(chan string, 100)
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					lines <- strings.TrimRight(sc.Text(), "\r")
				}
				close(lines)
			}()
			var seen []string
			serving := ""
			timeout := time.After(30 * time.Second)
			for serving == "" {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("stderr ended before the serving record:\n%s", strings.Join(seen, "\n"))
					}
					seen = append(seen, l)
					var rec map[string]any
					isJSON := json.Unmarshal([]byte(l), &rec) == nil
					if isJSON != c.wantJSON {
						t.Fatalf("log line %q: JSON %v, want %v", l, isJSON, c.wantJSON)
					}
					switch {
					case isJSON && rec["msg"] == "serving":
						if rec["level"] != "INFO" || rec["time"] == nil {
							t.Fatalf("serving record %v", rec)
						}
						serving, _ = rec["url"].(string)
					case !isJSON && strings.Contains(l, "msg=serving"):
						if !strings.Contains(l, "level=INFO") {
							t.Fatalf("serving line %q", l)
						}
						serving = regexp.MustCompile(`url=(\S+)`).FindStringSubmatch(l)[1]
					}
				case <-timeout:
					t.Fatalf("no serving record on stderr within 30 s:\n%s", strings.Join(seen, "\n"))
				}
			}
			// The report for people is on stdout, as scripts expect it.
			first, err := bufio.NewReader(stdout).ReadString('\n')
			if m := servingLine.FindStringSubmatch(first); m == nil || m[1] != serving {
				t.Fatalf("stdout's first line %q (%v); the log says %s", first, err, serving)
			}
		})
	}
}

// TestPprof: --pprof serves Go's profiles at /debug/pprof/ on a loopback
// address, and is refused on another without a token; without it there
// is nothing there.
func TestPprof(t *testing.T) {
	t.Setenv("CASCADE_TOKEN", "")
	if _, _, _, err := parseServe([]string{"--pprof", "--addr", "0.0.0.0:8080"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "CASCADE_TOKEN") {
		t.Fatalf("--pprof on 0.0.0.0 without a token: %v, want an error naming CASCADE_TOKEN", err)
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:8080"} {
		if _, _, _, err := parseServe([]string{"--pprof", "--addr", addr}, &bytes.Buffer{}); err != nil {
			t.Errorf("--pprof on %s: %v", addr, err)
		}
	}
	for _, on := range []bool{true, false} {
		addr, _ := serveProcess(t, t.TempDir(), fmt.Sprintf("CASCADE_PPROF=%v", on))
		resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		served := resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte("goroutine profile: total"))
		if served != on {
			t.Fatalf("CASCADE_PPROF=%v: %s\n%.300s", on, resp.Status, body)
		}
	}
}
