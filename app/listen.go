package app

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
)

// ErrOpenToNetwork is why a server without tokens refuses to listen on an
// address other machines reach.
var ErrOpenToNetwork = errors.New("without CASCADE_TOKEN anyone who reaches the port could upload, launch and cancel runs, so the server listens on loopback only; " +
	"set CASCADE_TOKEN (and CASCADE_READONLY_TOKEN for read-only users), or set CASCADE_ALLOW_REMOTE=1 (--allow-remote) to serve other machines without one")

// listen opens the API's listener and sets m.URL. Without tokens, and
// unless AllowRemote, only a loopback address will do: what the socket
// is bound to is checked, so a host name or ":8080" cannot slip past.
func (m *Main) listen() (net.Listener, error) {
	cfg := m.Config
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, inUse(fmt.Errorf("listen on %s: %w", cfg.Addr, err), "the API's address", cfg.Addr, "--addr", "CASCADE_ADDR")
	}
	addr := ln.Addr().(*net.TCPAddr)
	if !cfg.Tokens.Enabled() && !cfg.AllowRemote && !addr.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("listen on %s (%s): %w", cfg.Addr, addr, ErrOpenToNetwork)
	}
	scheme := "http://"
	if cfg.TLSCert != "" {
		scheme = "https://"
	}
	m.URL = scheme + addr.String()
	return ln, nil
}

// tlsConfig loads the certificate and key when both are given. HTTP/2 is
// not offered: websockets need HTTP/1.1's connection upgrade.
func (c Config) tlsConfig() (*tls.Config, error) {
	switch {
	case c.TLSCert == "" && c.TLSKey == "":
		return nil, nil
	case c.TLSCert == "" || c.TLSKey == "":
		return nil, errors.New("TLS: give both CASCADE_TLS_CERT and CASCADE_TLS_KEY (--tls-cert, --tls-key), or neither")
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s and key %s: %w", c.TLSCert, c.TLSKey, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	}, nil
}

// Exposure says at start who can reach the API and what they need, for
// the command to print.
func (m *Main) Exposure() string {
	cfg := m.Config
	switch {
	case cfg.Tokens.Enabled() && cfg.Tokens.ReadOnly != "":
		return "the API needs a token: CASCADE_TOKEN (read-write) or CASCADE_READONLY_TOKEN (read-only)"
	case cfg.Tokens.Enabled():
		return "the API needs a token: CASCADE_TOKEN"
	case cfg.AllowRemote:
		return "no CASCADE_TOKEN and --allow-remote: anyone who reaches " + m.URL + " can upload, launch and cancel runs"
	}
	return "no CASCADE_TOKEN: listening on loopback only, open to everyone on this machine; set CASCADE_TOKEN to serve other machines"
}
