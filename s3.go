package cascade

import (
	"fmt"
	"path"
)

// S3Keys is an access key pair S3 requests are signed with: the S3
// endpoint's (package s3gw) and the uploader's (package upload).
type S3Keys struct {
	AccessKey string
	SecretKey string
}

// Endpoint is what a user needs to upload a trace: where, into which
// bucket and prefix, with which keys, and commands to paste.
type S3Endpoint struct {
	URL       string // as reachable by clients, "http://gpu-box:7070"
	Bucket    string
	Prefix    string
	Region    string
	AccessKey string
	SecretKey string
}

// exampleTrace is the trace directory the example commands upload.
const exampleTrace = "my-trace"

func (e S3Endpoint) dest() string {
	return "s3://" + path.Join(e.Bucket, e.Prefix, exampleTrace) + "/"
}

// Env is the shell line that hands the keys to the AWS CLI and the SDKs.
func (e S3Endpoint) Env() string {
	return fmt.Sprintf("export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_DEFAULT_REGION=%s", e.AccessKey, e.SecretKey, e.Region)
}

// AWSCommand uploads ./my-trace with the AWS CLI (after Env): the data
// files first, metadata.json last.
func (e S3Endpoint) AWSCommand() string {
	return fmt.Sprintf("aws --endpoint-url %[1]s s3 cp --recursive --exclude metadata.json ./%[2]s %[3]s && aws --endpoint-url %[1]s s3 cp ./%[2]s/metadata.json %[3]s",
		e.URL, exampleTrace, e.dest())
}

// RcloneCommand uploads ./my-trace with rclone, needing no rclone.conf:
// the data files first, metadata.json last.
func (e S3Endpoint) RcloneCommand() string {
	remote := fmt.Sprintf(":s3,provider=Other,endpoint='%s',access_key_id=%s,secret_access_key=%s:%s",
		e.URL, e.AccessKey, e.SecretKey, path.Join(e.Bucket, e.Prefix, exampleTrace))
	return fmt.Sprintf("rclone copy --exclude metadata.json ./%[1]s \"%[2]s\" && rclone copy --include metadata.json ./%[1]s \"%[2]s\"",
		exampleTrace, remote)
}

// CascadeCommand uploads ./my-trace with cascade upload (after Env).
func (e S3Endpoint) CascadeCommand() string {
	cmd := fmt.Sprintf("cascade upload ./%[1]s --run-name %[1]s --endpoint %[2]s", exampleTrace, e.URL)
	if e.Bucket != "cascade" {
		cmd += " --bucket " + e.Bucket
	}
	if e.Prefix != "traces" {
		cmd += " --prefix '" + e.Prefix + "'"
	}
	return cmd
}
