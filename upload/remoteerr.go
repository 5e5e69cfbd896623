package upload

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// errNotS3: a listing answered without an S3 request id.
var errNotS3 = errors.New("the answer to a listing carries no S3 request id (x-amz-request-id)")

// requestFailed is the error of an upload whose request for what failed
// with err. When explain places err, the sentence it says comes first,
// and the SDK's own words after it (kept, and wrapped): those begin
// "operation error S3: ListObjectsV2, https response error StatusCode:
// 403" even over plain HTTP, and name no flag.
func requestFailed(opts Options, what string, err error) error {
	if why := explain(opts, err); why != "" {
		return &explained{why: "upload: " + why, what: what, err: err}
	}
	if what == "" {
		return fmt.Errorf("upload: %w", err)
	}
	return fmt.Errorf("upload: %s: %w", what, err)
}

// explain says what a request's error means for the user, naming what
// to change; "" for an error it cannot place.
func explain(opts Options, err error) string {
	why := ""
	var api smithy.APIError
	var resp *awshttp.ResponseError
	var dec *smithy.DeserializationError
	var op *net.OpError
	switch {
	case errors.As(err, &resp) && resp.RequestID == "" && resp.HTTPStatusCode() != 0,
		errors.As(err, &dec), errors.Is(err, errNotS3):
		// An S3 server names every answer with a request id (the
		// gateway's x-amz-request-id); a web server answers without
		// one, or with a page no S3 client can read.
		status := ""
		if resp != nil {
			status = fmt.Sprintf(" (HTTP %d without an S3 request id)", resp.HTTPStatusCode())
		}
		why = fmt.Sprintf("%s does not answer as an S3 endpoint%s: --endpoint takes the URL `cascade serve` prints as \"serving S3\" (CASCADE_S3_URL, port 7070 unless CASCADE_S3_ADDR says otherwise), not the web UI's", opts.Endpoint, status)
	case errors.As(err, &api):
		switch api.ErrorCode() {
		case "InvalidAccessKeyId":
			why = fmt.Sprintf("the endpoint knows no access key %q: give the key pair `cascade serve` prints, also in its data directory's s3-keys.env (--access-key and --secret-key, or CASCADE_S3_ACCESS_KEY and CASCADE_S3_SECRET_KEY)", opts.Keys.AccessKey)
		case "SignatureDoesNotMatch":
			why = fmt.Sprintf("the secret key is not access key %q's: give the key pair `cascade serve` prints, also in its data directory's s3-keys.env (--secret-key, or CASCADE_S3_SECRET_KEY)", opts.Keys.AccessKey)
		case "AccessDenied":
			why = fmt.Sprintf("access key %q may not write to bucket %q: is it the server's read-only pair (CASCADE_S3_READONLY_ACCESS_KEY)? Uploads take the read-write pair", opts.Keys.AccessKey, opts.Bucket)
		case "NoSuchBucket":
			why = fmt.Sprintf("the endpoint has no bucket %q: --bucket takes the server's CASCADE_BUCKET (cascade unless set)", opts.Bucket)
		case "RequestTimeTooSkewed":
			why = "this machine's clock is too far from the server's for a signed request: set both clocks right (NTP)"
		}
	case errors.As(err, &op) && op.Op == "dial":
		why = fmt.Sprintf("nothing answers at %s: is `cascade serve` running there, with its S3 endpoint on that address (it prints \"serving S3\" and the URL)?", opts.Endpoint)
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		why = fmt.Sprintf("%s speaks plain HTTP: give its URL with http://", strings.Replace(opts.Endpoint, "https://", "", 1))
	}
	return why
}

// explained is an error with the sentence explain found for it first.
type explained struct {
	why, what string
	err       error
}

func (e *explained) Error() string {
	if e.what == "" {
		return e.why + "\n  (" + e.err.Error() + ")"
	}
	return e.why + "\n  (" + e.what + ": " + e.err.Error() + ")"
}
func (e *explained) Unwrap() error { return e.err }

// checkEndpoint refuses an endpoint that is no http(s) URL of a host
// alone, saying what to give instead: CASCADE_S3_ADDR's form
// (127.0.0.1:7070) has no scheme, and a bucket or prefix in the path
// was read as part of every key.
func checkEndpoint(e string) error {
	if !strings.Contains(e, "://") {
		return fmt.Errorf("upload: --endpoint %q has no scheme: give http://%s", e, e)
	}
	u, err := url.Parse(e)
	switch {
	case err != nil:
		return fmt.Errorf("upload: --endpoint %q is not a URL: %w", e, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("upload: --endpoint %q: the S3 endpoint is reached by http:// (or https:// behind TLS), not %s://", e, u.Scheme)
	case u.Host == "":
		return fmt.Errorf("upload: --endpoint %q names no host: give http://host:port", e)
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "":
		return fmt.Errorf("upload: --endpoint %q has a path: give the endpoint alone, %s://%s; the bucket is --bucket, the prefix in it --prefix", e, u.Scheme, u.Host)
	}
	return nil
}
