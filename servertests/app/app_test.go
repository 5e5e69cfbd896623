package app_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// nonLoopbackIP is an address of this machine other machines could reach,
// or the test is skipped.
func nonLoopbackIP(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no non-loopback IPv4 address")
	return ""
}

func config(t *testing.T, addr string) app.Config {
	return app.Config{
		DataDir:        t.TempDir(),
		Bucket:         "cascade",
		Prefix:         "traces",
		Addr:           addr,
		ScanInterval:   time.Second,
		PostprocessCmd: []string{"/nonexistent/postprocessor"},
	}
}

// TestRemoteBindNeedsATokenOrConsent: without a token the server refuses
// to listen where other machines reach it, by the address it would bind,
// however it is spelled; a token, or AllowRemote, lets it.
func TestRemoteBindNeedsATokenOrConsent(t *testing.T) {
	t.Parallel()
	ip := nonLoopbackIP(t)
	for _, addr := range []string{":0", "0.0.0.0:0", ip + ":0"} {
		_, err := app.Run(context.Background(), config(t, addr))
		if !errors.Is(err, app.ErrOpenToNetwork) || !strings.Contains(err.Error(), "CASCADE_TOKEN") || !strings.Contains(err.Error(), "--allow-remote") {
			t.Errorf("%s without a token: want ErrOpenToNetwork naming CASCADE_TOKEN and --allow-remote, got %v", addr, err)
		}
	}
	testkit.SkipShort(t, "starts the server") // the refusals above start none
	for name, configure := range map[string]func(*app.Config){
		"token":        func(c *app.Config) { c.Tokens = cascade.Tokens{ReadWrite: "a-token-of-some-length"} },
		"allow-remote": func(c *app.Config) { c.AllowRemote = true },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := config(t, ip+":0")
			configure(&cfg)
			m, err := app.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			resp, err := http.Get(m.URL + "/healthz")
			if err != nil {
				t.Fatalf("%s from another address: %v", m.URL, err)
			}
			resp.Body.Close()
			if !strings.Contains(m.Exposure(), map[string]string{"token": "needs a token", "allow-remote": "anyone who reaches"}[name]) {
				t.Errorf("start message %q", m.Exposure())
			}
		})
	}
	// Loopback needs neither, and says so.
	m, err := app.Run(context.Background(), config(t, "localhost:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !strings.Contains(m.Exposure(), "loopback only") {
		t.Errorf("start message %q", m.Exposure())
	}
}

func TestBadTokenConfig(t *testing.T) {
	t.Parallel()
	for _, tokens := range []cascade.Tokens{
		{ReadOnly: "read-only-token-0123456789"},
		{ReadWrite: "short"},
		{ReadWrite: "same-token-0123456789", ReadOnly: "same-token-0123456789"},
	} {
		cfg := config(t, "127.0.0.1:0")
		cfg.Tokens = tokens
		if m, err := app.Run(context.Background(), cfg); err == nil {
			m.Close()
			t.Errorf("%+v: started", tokens)
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// a client configuration that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cascade test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, &tls.Config{RootCAs: pool}
}

// TestTLS: with a certificate the server speaks HTTPS and WSS only, to a
// client that checks the certificate; tokens work over both.
func TestTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, clientTLS := selfSigned(t)
	const token = "tls-test-token-0123456789"
	s := servertest.Server(t, func(c *app.Config) {
		c.TLSCert, c.TLSKey = certFile, keyFile
		c.Tokens = cascade.Tokens{ReadWrite: token}
	})
	s.TLS = clientTLS
	if !strings.HasPrefix(s.URL, "https://127.0.0.1:") {
		t.Fatalf("URL %s", s.URL)
	}
	var r struct{ Trace struct{ ID string } }
	s.MustDo(t, `{ trace(id: "sample") { id } }`, nil, &r)
	if r.Trace.ID != "sample" {
		t.Fatalf("over HTTPS: %+v", r)
	}
	if resp := s.Post(t, "", `{ __typename }`, nil); resp.Status != http.StatusUnauthorized {
		t.Fatalf("no token over HTTPS: status %d", resp.Status)
	}

	// WSS: a subscription follows a change.
	sub := s.Subscribe(t, "graphql-transport-ws", `subscription { traceUpdated(id: "over-tls") { id } }`, nil)
	s.WriteFile(t, "over-tls", "traces/kernel-1.trace", []byte("x"))
	var u struct{ TraceUpdated struct{ ID string } }
	if err := sub.Next(10*time.Second, &u); err != nil || u.TraceUpdated.ID != "over-tls" {
		t.Fatalf("over WSS: %+v %v", u, err)
	}
	if _, ok := sub.Conn.UnderlyingConn().(*tls.Conn); !ok {
		t.Fatalf("the websocket runs over %T, not TLS", sub.Conn.UnderlyingConn())
	}

	// Plain HTTP to the TLS port gets nothing it can use, and a client that
	// does not trust the certificate is refused.
	plain := strings.Replace(s.URL, "https://", "http://", 1)
	if resp, err := http.Get(plain + "/graphql?query={__typename}"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered 200")
		}
	}
	_, err := http.Get(s.URL + "/healthz")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("a client without the certificate: want an unknown authority error, got %v", err)
	}
}

// TestPprofNeedsAToken: with tokens on, /debug/pprof/ takes the read-write
// token only: 401 without one, 403 with the read-only one; /healthz stays
// open.
func TestPprofNeedsAToken(t *testing.T) {
	t.Parallel()
	tokens := cascade.Tokens{ReadWrite: "pprof-rw-token-0123456789", ReadOnly: "pprof-ro-token-0123456789"}
	s := servertest.Server(t, func(c *app.Config) { c.Pprof, c.Tokens = true, tokens })
	for token, want := range map[string]int{"": 401, "wrong-token-0123456789": 401, tokens.ReadOnly: 403, tokens.ReadWrite: 200} {
		req, _ := http.NewRequest("GET", s.URL+"/debug/pprof/goroutine?debug=1", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token %q: status %d, want %d", token, resp.StatusCode, want)
		}
	}
	resp, err := http.Get(s.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz without a token: %d", resp.StatusCode)
	}
}

// heldS3 is the S3 server of a held S3 port: the port's check comes
// before it starts.
type heldS3 struct{ t *testing.T }

func (heldS3) LoadOrCreateKeys(string) (cascade.S3Keys, bool, error) {
	return cascade.S3Keys{AccessKey: "HELDACCESSKEY", SecretKey: "held-secret-key"}, false, nil
}

func (s heldS3) Start(context.Context, app.S3Config) (app.S3Gateway, error) {
	s.t.Error("the S3 endpoint started on a held port")
	return nil, errors.New("held port")
}

// TestLatePhaseFailureStopsWhatStarted: a phase that fails after the
// server listens (the S3 endpoint's port held, the executor unknown)
// makes Run return its error, with the API's listener closed and the
// database closed: the same address serves a server started next.
func TestLatePhaseFailureStopsWhatStarted(t *testing.T) {
	t.Parallel()
	testkit.SkipShort(t, "starts the server")
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dataDir := t.TempDir()
	for name, configure := range map[string]func(*app.Config){
		"s3 port held":     func(c *app.Config) { c.S3Addr, c.S3Server = held.Addr().String(), heldS3{t} },
		"unknown executor": func(c *app.Config) { c.Executor = "nowhere" },
	} {
		cfg := config(t, addr)
		cfg.DataDir = dataDir
		configure(&cfg)
		if m, err := app.Run(context.Background(), cfg); err == nil {
			m.Close()
			t.Fatalf("%s: started", name)
		}
	}
	m, err := app.Run(context.Background(), func() app.Config { c := config(t, addr); c.DataDir = dataDir; return c }())
	if err != nil {
		t.Fatalf("a server on the address and data directory the failed starts left: %v", err)
	}
	m.Close()
}
