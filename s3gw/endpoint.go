package s3gw

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
)

// Endpoint is what a user needs to upload a trace: where, into which
// bucket and prefix, with which keys, and commands to paste.
type Endpoint struct {
	URL       string // as reachable by clients, "http://gpu-box:7070"
	Bucket    string
	Prefix    string
	Region    string
	AccessKey string
	SecretKey string
}

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

// exampleTrace is the trace directory the example commands upload.
const exampleTrace = "my-trace"

func (e Endpoint) dest() string {
	return "s3://" + path.Join(e.Bucket, e.Prefix, exampleTrace) + "/"
}

// Env is the shell line that hands the keys to the AWS CLI and the SDKs.
func (e Endpoint) Env() string {
	return fmt.Sprintf("export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_DEFAULT_REGION=%s", e.AccessKey, e.SecretKey, e.Region)
}

// AWSCommand uploads ./my-trace with the AWS CLI (after Env): the data
// files first, metadata.json last.
func (e Endpoint) AWSCommand() string {
	return fmt.Sprintf("aws --endpoint-url %[1]s s3 cp --recursive --exclude metadata.json ./%[2]s %[3]s && aws --endpoint-url %[1]s s3 cp ./%[2]s/metadata.json %[3]s",
		e.URL, exampleTrace, e.dest())
}

// RcloneCommand uploads ./my-trace with rclone, needing no rclone.conf:
// the data files first, metadata.json last.
func (e Endpoint) RcloneCommand() string {
	remote := fmt.Sprintf(":s3,provider=Other,endpoint='%s',access_key_id=%s,secret_access_key=%s:%s",
		e.URL, e.AccessKey, e.SecretKey, path.Join(e.Bucket, e.Prefix, exampleTrace))
	return fmt.Sprintf("rclone copy --exclude metadata.json ./%[1]s \"%[2]s\" && rclone copy --include metadata.json ./%[1]s \"%[2]s\"",
		exampleTrace, remote)
}

// CascadeCommand uploads ./my-trace with cascade upload (after Env).
func (e Endpoint) CascadeCommand() string {
	cmd := fmt.Sprintf("cascade upload ./%[1]s --run-name %[1]s --endpoint %[2]s", exampleTrace, e.URL)
	if e.Bucket != "cascade" {
		cmd += " --bucket " + e.Bucket
	}
	if e.Prefix != "traces" {
		cmd += " --prefix '" + e.Prefix + "'"
	}
	return cmd
}
