package s3gw

import (
	"net"
	"net/url"
	"os"
)

// PublicURL is the URL clients use for a gateway listening at listenURL:
// publicURL when set, else listenURL with an unspecified host (0.0.0.0,
// [::]) replaced by this machine's host name.
func PublicURL(listenURL, publicURL string) string {
	if publicURL != "" {
		return publicURL
	}
	u, err := url.Parse(listenURL)
	if err != nil {
		return listenURL
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			u.Host = net.JoinHostPort(h, u.Port())
		}
	}
	return u.String()
}
