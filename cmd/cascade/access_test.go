package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/testkit"
)

func TestServeAccessConfig(t *testing.T) {
	t.Setenv("CASCADE_TOKEN", "env-token-0123456789")
	t.Setenv("CASCADE_READONLY_TOKEN", "env-ro-token-0123456789")
	t.Setenv("CASCADE_ALLOW_REMOTE", "1")
	t.Setenv("CASCADE_TLS_CERT", "cert.pem")
	t.Setenv("CASCADE_TLS_KEY", "key.pem")
	t.Setenv("CASCADE_S3_READONLY_ACCESS_KEY", "ROKEY")
	t.Setenv("CASCADE_S3_READONLY_SECRET_KEY", "rosecret")
	t.Setenv("CASCADE_MAX_CONNS_PER_CLIENT", "7")
	cfg, _, _, err := parseServe([]string{"--token", "flag-token-0123456789", "--max-query-depth", "9"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tokens.ReadWrite != "flag-token-0123456789" || cfg.Tokens.ReadOnly != "env-ro-token-0123456789" || !cfg.AllowRemote ||
		cfg.TLSCert != "cert.pem" || cfg.TLSKey != "key.pem" || cfg.S3ReadOnlyKeys.AccessKey != "ROKEY" || cfg.S3ReadOnlyKeys.SecretKey != "rosecret" ||
		cfg.Limits.MaxConnsPerClient != 7 || cfg.Limits.MaxDepth != 9 {
		t.Fatalf("%+v", cfg)
	}
	// --pprof on a non-loopback address takes the flag's token too.
	if _, _, _, err := parseServe([]string{"--pprof", "--addr", "0.0.0.0:8080", "--token", "flag-token-0123456789"}, &bytes.Buffer{}); err != nil {
		t.Fatalf("--pprof with --token: %v", err)
	}
	t.Setenv("CASCADE_S3_READONLY_SECRET_KEY", "")
	if _, _, _, err := parseServe(nil, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "CASCADE_S3_READONLY_SECRET_KEY") {
		t.Fatalf("half a read-only key pair: %v", err)
	}
}

// serveOutput starts `cascade serve` with env and returns its first lines
// (up to the S3 lines) and the API's URL, or its output and exit error
// when it stops at start.
func serveOutput(t *testing.T, env ...string) (out, url string, err error) {
	t.Helper()
	cmd := exec.Command(testkit.Program(t, "./cmd/cascade"), "serve")
	cmd.Env = append(os.Environ(), append([]string{"CASCADE_DATA_DIR=" + t.TempDir(), "CASCADE_S3_ADDR=off",
		"CASCADE_TOKEN=", "CASCADE_READONLY_TOKEN=", "CASCADE_ALLOW_REMOTE="}, env...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.Contains(lines.Text(), "S3 endpoint") {
		b.WriteString(lines.Text() + "\n")
	}
	if m := regexp.MustCompile(`serving (\S+) `).FindStringSubmatch(b.String()); m != nil {
		url = m[1]
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		go io.Copy(io.Discard, stdout)
		return b.String(), url, nil
	}
	err = cmd.Wait()
	return b.String() + stderr.String(), "", err
}

// TestServeSaysWhoCanReachIt: the start says who may use the API; without
// a token the server will not listen where other machines reach it.
func TestServeSaysWhoCanReachIt(t *testing.T) {
	t.Parallel()
	out, _, err := serveOutput(t, "CASCADE_ADDR=0.0.0.0:0")
	if err == nil || !strings.Contains(out, "CASCADE_TOKEN") || !strings.Contains(out, "CASCADE_ALLOW_REMOTE=1 (--allow-remote)") {
		t.Fatalf("0.0.0.0 without a token: %v\n%s", err, out)
	}

	out, _, err = serveOutput(t, "CASCADE_ADDR=127.0.0.1:0")
	if err != nil || !strings.Contains(out, "no CASCADE_TOKEN: listening on loopback only") {
		t.Fatalf("loopback: %v\n%s", err, out)
	}

	out, url, err := serveOutput(t, "CASCADE_ADDR=0.0.0.0:0", "CASCADE_TOKEN=serve-test-token-0123456789")
	if err != nil || !strings.Contains(out, "the API needs a token") {
		t.Fatalf("0.0.0.0 with a token: %v\n%s", err, out)
	}
	url = strings.Replace(url, "0.0.0.0", "127.0.0.1", 1)
	resp, err := http.Get(url + "/graphql?query={__typename}")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: status %d", resp.StatusCode)
	}

	out, _, err = serveOutput(t, "CASCADE_ADDR=0.0.0.0:0", "CASCADE_ALLOW_REMOTE=1")
	if err != nil || !strings.Contains(out, "anyone who reaches") {
		t.Fatalf("0.0.0.0 with --allow-remote: %v\n%s", err, out)
	}
}
