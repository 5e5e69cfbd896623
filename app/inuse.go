package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// inUse turns a listen error for an address another program holds into
// what to do about it: who is there (another Cascade server answers
// /healthz) and the setting that picks another port. Any other error is
// returned as it is.
func inUse(err error, what, addr, flag, env string) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	who := "another program listens there"
	if cascadeAt(addr) {
		who = "another Cascade server is already running there (http://" + addr + "/healthz answers)"
	}
	return fmt.Errorf("%s %s is in use: %s; stop it, or start this one on another port with %s %s (%s)",
		what, addr, who, flag, nextPort(addr), env)
}

// cascadeAt reports whether a Cascade server answers /healthz at addr.
func cascadeAt(addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var h struct {
		Status, Database, Bucket string
	}
	return json.NewDecoder(resp.Body).Decode(&h) == nil && h.Status != "" && h.Bucket != ""
}

// nextPort is addr with its port one higher: a suggestion.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "127.0.0.1:8081"
	}
	var n int
	if _, err := fmt.Sscan(port, &n); err != nil || n <= 0 || n >= 65535 {
		return addr
	}
	if strings.Contains(host, ":") {
		return fmt.Sprintf("[%s]:%d", host, n+1)
	}
	return fmt.Sprintf("%s:%d", host, n+1)
}

// checkFree fails early, and says what to do, when addr is taken: the S3
// gateway's own error does not say which address.
func checkFree(what, addr, flag, env string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return inUse(fmt.Errorf("listen on %s: %w", addr, err), what, addr, flag, env)
	}
	return ln.Close()
}
