package app_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/glebarez/go-sqlite" // database/sql driver "sqlite", to hold a lock on the server's file
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/dbtest"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// health GETs /healthz and decodes its body.
func health(t *testing.T, base string) (int, app.Health) {
	t.Helper()
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	defer resp.Body.Close()
	var h app.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("/healthz (%s): body is not JSON: %v", resp.Status, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("/healthz Content-Type %q", ct)
	}
	return resp.StatusCode, h
}

// TestHealthzBucket: a server with its database and bucket answers 200;
// a bucket directory that is gone makes it 503, saying so, until it is back.
func TestHealthzBucket(t *testing.T) {
	servertest.ForEachServer(t, func(t *testing.T, s *servertest.TestServer) {
		if code, h := health(t, s.URL); code != http.StatusOK || h != (app.Health{Status: "ok", Database: "ok", Bucket: "ok", Build: h.Build}) || h.Build.Version == "" {
			t.Fatalf("healthy server: %d %+v", code, h)
		}
		bucket := s.Config.BucketDir()
		away := bucket + ".away"
		if err := os.Rename(bucket, away); err != nil {
			t.Fatal(err)
		}
		code, h := health(t, s.URL)
		if code != http.StatusServiceUnavailable || h.Status != "unavailable" || h.Database != "ok" ||
			!strings.Contains(h.Bucket, bucket) || !strings.Contains(h.Bucket, "no such file or directory") {
			t.Fatalf("bucket gone: %d %+v", code, h)
		}
		if err := os.Rename(away, bucket); err != nil {
			t.Fatal(err)
		}
		if code, h := health(t, s.URL); code != http.StatusOK {
			t.Fatalf("bucket back: %d %+v", code, h)
		}
	})
}

// TestHealthzDatabase: a database the server cannot query makes /healthz
// 503 with the database's error. On PostgreSQL the connection is cut
// between the server and the database (a TCP proxy stops), and /healthz is
// 200 again once the database can be reached; on SQLite the server's
// handle is closed.
func TestHealthzDatabase(t *testing.T) {
	testkit.SkipShort(t, "starts the server")
	t.Run("sqlite", func(t *testing.T) {
		m, err := app.Run(context.Background(), app.Config{DataDir: t.TempDir(), Bucket: "cascade", Prefix: "traces", Addr: "127.0.0.1:0", ScanInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close() // fails: the database is closed already
		if code, _ := health(t, m.URL); code != http.StatusOK {
			t.Fatalf("before: %d", code)
		}
		m.DB.Close()
		code, h := health(t, m.URL)
		if code != http.StatusServiceUnavailable || h.Status != "unavailable" || !strings.Contains(h.Database, "database is closed") || h.Bucket != "ok" {
			t.Fatalf("closed database: %d %+v", code, h)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv(dbtest.PostgresEnv)
		if dsn == "" {
			t.Skip(dbtest.PostgresEnv + " not set")
		}
		u, err := url.Parse(dbtest.PostgresSchema(t, dsn))
		if err != nil {
			t.Fatal(err)
		}
		p := startProxy(t, u.Host)
		u.Host = p.addr
		s := servertest.Server(t, func(c *app.Config) { c.DatabaseURL = u.String() })
		if code, h := health(t, s.URL); code != http.StatusOK {
			t.Fatalf("before: %d %+v", code, h)
		}
		p.cut()
		code, h := health(t, s.URL)
		if code != http.StatusServiceUnavailable || h.Status != "unavailable" || h.Database == "ok" || h.Bucket != "ok" {
			t.Fatalf("database cut off: %d %+v", code, h)
		}
		t.Logf("database cut off: %+v", h)
		p.restore(t)
		testkit.Eventually(t, 10*time.Second, "healthy once the database is back", func() bool {
			code, _ := health(t, s.URL)
			return code == http.StatusOK
		})
	})
}

// proxy forwards TCP connections to a database; cut closes its listener
// and every connection, restore listens again on the same address.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, d)
			p.mu.Unlock()
			go func() { io.Copy(d, c); d.Close() }()
			go func() { io.Copy(c, d); c.Close() }()
		}
	}()
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// TestHealthzWhileMigrating: the server listens before it migrates the
// database, and says so: while the migration waits for a lock another
// connection holds, /healthz is 503 "migrating" and the API 503; once the
// lock goes, the start finishes and /healthz is 200.
func TestHealthzWhileMigrating(t *testing.T) {
	testkit.SkipShort(t, "starts the server")
	for name, dbURL := range dbtest.DatabaseURLs(t) {
		t.Run(name, func(t *testing.T) {
			cfg := app.Config{DataDir: t.TempDir(), Bucket: "cascade", Prefix: "traces", Addr: "127.0.0.1:0", DatabaseURL: dbURL, ScanInterval: time.Hour}
			first, err := app.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			release := lockMigrations(t, name, dbURL, cfg.DataDir)

			listening := make(chan string, 1)
			cfg.Listening = func(u string) { listening <- u }
			type started struct {
				m   *app.Main
				err error
			}
			done := make(chan started, 1)
			go func() {
				m, err := app.Run(context.Background(), cfg)
				done <- started{m, err}
			}()
			var base string
			select {
			case base = <-listening:
			case s := <-done:
				t.Fatalf("Run returned before it listened: %v", s.err)
			}
			code, h := health(t, base)
			if code != http.StatusServiceUnavailable || h.Status != "migrating" || h.Database != "migrating" || h.Bucket != "ok" {
				t.Fatalf("while migrating: %d %+v", code, h)
			}
			resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("/graphql while migrating: %s", resp.Status)
			}
			select {
			case s := <-done:
				t.Fatalf("Run returned while the migration was locked out: %v", s.err)
			default:
			}
			release()
			s := <-done
			if s.err != nil {
				t.Fatalf("Run after the lock was released: %v", s.err)
			}
			defer s.m.Close()
			if code, h := health(t, base); code != http.StatusOK {
				t.Fatalf("after the migration: %d %+v", code, h)
			}
		})
	}
}

// lockMigrations takes, on another connection, a lock that the server's
// migration waits for: SQLite's write lock (the migration's transaction
// begins IMMEDIATE, and waits out its busy timeout), or on PostgreSQL an
// exclusive lock on schema_migrations. It returns the function that lets go.
func lockMigrations(t *testing.T, name, dbURL, dataDir string) (release func()) {
	t.Helper()
	var sqlDB *sql.DB
	if name == "sqlite" {
		var err error
		if sqlDB, err = sql.Open("sqlite", filepath.Join(dataDir, "cascade.db")); err != nil {
			t.Fatal(err)
		}
	} else {
		g, err := gorm.Open(postgres.Open(dbURL), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if sqlDB, err = g.DB(); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lock := []string{"BEGIN IMMEDIATE"}
	if name != "sqlite" {
		lock = []string{"BEGIN", "LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE"}
	}
	for _, q := range lock {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Errorf("rollback: %v", err)
			}
			conn.Close()
			sqlDB.Close()
		})
	}
	t.Cleanup(release)
	return release
}
