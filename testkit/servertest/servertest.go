package servertest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
)

// TestServer is a real Cascade server on a free loopback port.
type TestServer struct {
	*app.Main
	DataDir string
	// Token, when set, is sent with every request of Do, MustDo and
	// Subscribe: the server's Config.Tokens.ReadWrite, by default.
	Token string
	// TLS is the client's TLS configuration for a server with a
	// certificate (one that trusts it).
	TLS *tls.Config
}

// Server starts the real server with a fresh data directory, a fast scan
// interval and, on PostgreSQL runs, the database URL given; configure may
// change the Config first. The server is closed when the test ends.
//
// The server belongs to the full suite: under go test -short the test is
// skipped here.
func Server(t testing.TB, configure ...func(*app.Config)) *TestServer {
	t.Helper()
	testkit.SkipShort(t, "starts the server")
	dir := t.TempDir()
	cfg := app.Config{
		DataDir:        dir,
		Bucket:         "cascade",
		Prefix:         "traces",
		Addr:           "127.0.0.1:0",
		ScanInterval:   200 * time.Millisecond,
		PostprocessCmd: []string{"/nonexistent/postprocessor"},
		// One simulation at once, as tests were written for; 0 sizes it
		// by the machine, as cascade serve does by default.
		RunConcurrency: 1,
		Logger:         slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, f := range configure {
		f(&cfg)
	}
	if cfg.DatabaseURL == "" {
		// SQLite in the data directory: a new one starts migrated.
		dbtest.SeedSQLite(t, cfg.DataDir)
	}
	m, err := app.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	s := &TestServer{Main: m, DataDir: dir, Token: cfg.Tokens.ReadWrite}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
	})
	return s
}

// testWriter sends the server's log to the test's log, shown on failure.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// TraceDir is the bucket directory of the trace with the given id.
func (s *TestServer) TraceDir(id string) string { return filepath.Join(s.Config.BucketDir(), id) }

// WriteFile writes a file of a trace (rel is slash-separated, relative to
// the trace directory) the way an uploader does: to a dotfile temporary
// name first, renamed when complete.
func (s *TestServer) WriteFile(t testing.TB, id, rel string, data []byte) {
	t.Helper()
	testkit.WriteFileAtomic(t, filepath.Join(s.TraceDir(id), filepath.FromSlash(rel)), data)
}

// GraphQLError is one error of a GraphQL response.
type GraphQLError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code is the error's extensions.code.
func (e GraphQLError) Code() string { s, _ := e.Extensions["code"].(string); return s }

// Response is a GraphQL response over HTTP.
type Response struct {
	Status int
	Header http.Header
	Data   json.RawMessage `json:"data"`
	Errors []GraphQLError  `json:"errors"`
}

// Client is an HTTP client of the server, trusting its certificate when
// it has one. A request, its body read to the end, may take
// clientTimeout.
func (s *TestServer) Client() *http.Client {
	return &http.Client{Timeout: clientTimeout, Transport: &http.Transport{TLSClientConfig: s.TLS}}
}

// clientTimeout bounds a request a test makes, its body included: long
// enough for the largest body a test reads on CI's two cores, where every
// package's tests and the simulators share them and a process gets a
// fraction of a core. TestKernelsCSV (10,007 kernels stored with their
// statistics, then downloaded as one streamed CSV) takes 6 s in all on an
// idle machine under the race detector; in CI its download once passed
// the 30 s this was (2026-12-07, load 15).
const clientTimeout = 3 * time.Minute

// Post posts a GraphQL request with "Authorization: Bearer <token>"
// (none when token is empty). A transport failure fails the test.
func (s *TestServer) Post(t testing.TB, token, query string, vars map[string]any) Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequest("POST", s.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	r := Response{Status: resp.StatusCode, Header: resp.Header}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("decode response (%s): %v", resp.Status, err)
	}
	return r
}

// Do posts a GraphQL request (with s.Token) and decodes its data into out
// (if not nil). It returns the response's errors; a transport failure
// fails the test.
func (s *TestServer) Do(t testing.TB, query string, vars map[string]any, out any) []GraphQLError {
	t.Helper()
	r := s.Post(t, s.Token, query, vars)
	if out != nil && len(r.Data) > 0 && string(r.Data) != "null" {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatalf("decode data %s: %v", r.Data, err)
		}
	}
	return r.Errors
}

// MustDo is Do for requests that must not fail.
func (s *TestServer) MustDo(t testing.TB, query string, vars map[string]any, out any) {
	t.Helper()
	if errs := s.Do(t, query, vars, out); len(errs) > 0 {
		t.Fatalf("graphql errors: %+v", errs)
	}
}

// ErrTimeout is returned by Subscription.Next when nothing came in time.
var ErrTimeout = fmt.Errorf("no message in time")

// ForEachServer runs fn as a subtest against a fresh server on SQLite and,
// when PostgresEnv is set, on a fresh PostgreSQL schema. Under go test
// -short it skips the test.
func ForEachServer(t *testing.T, fn func(t *testing.T, s *TestServer), configure ...func(*app.Config)) {
	t.Helper()
	testkit.SkipShort(t, "starts the server")
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			fn(t, Server(t, append([]func(*app.Config){func(c *app.Config) { c.DatabaseURL = u }}, configure...)...))
		})
	}
}

// ForEachServerOnSmallDisk is ForEachServer with the server's whole data
// directory (database on SQLite, bucket, work files) on a tmpfs of the
// given size ("16m"), as a server keeps them on one disk.
func ForEachServerOnSmallDisk(t *testing.T, size string, fn func(t *testing.T, s *TestServer), configure ...func(*app.Config)) {
	t.Helper()
	testkit.SkipShort(t, "starts the server")
	for name, u := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			testkit.SmallDisk(t, data, size)
			fn(t, Server(t, append([]func(*app.Config){func(c *app.Config) { c.DataDir, c.DatabaseURL = data, u }}, configure...)...))
		})
	}
}

// TraceState is a trace's state as TraceNow reads it.
type TraceState struct {
	State       string
	Error       *string
	KernelCount int
}

// TraceNow reads trace id's state; a trace not found fails the test.
func (s *TestServer) TraceNow(t testing.TB, id string) TraceState {
	t.Helper()
	var r struct{ Trace *TraceState }
	s.MustDo(t, `query($id: ID!) { trace(id: $id) { state error kernelCount } }`, map[string]any{"id": id}, &r)
	if r.Trace == nil {
		t.Fatalf("trace %s not found", id)
	}
	return *r.Trace
}
