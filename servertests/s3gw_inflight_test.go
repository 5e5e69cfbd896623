package servertests_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/cascade-sim/cascade/testkit"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// streamedPut starts a PUT of size bytes whose body the test writes into
// the returned pipe; done delivers the request's outcome.
func streamedPut(t *testing.T, url, key string, size int64) (*io.PipeWriter, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPut, url+"/cascade/"+key, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	creds := aws.Credentials{AccessKeyID: s3test.Keys.AccessKey, SecretAccessKey: s3test.Keys.SecretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s: %s", resp.Status, body)
			}
		}
		pr.CloseWithError(errors.New("PUT returned"))
		done <- err
	}()
	return pw, done
}

// TestUploadsInFlight: /metrics counts the PUTs streaming into the bucket
// while they last.
func TestUploadsInFlight(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	inFlight := func() float64 { return testkit.Scrape(t, s.URL+"/metrics")["cascade_s3_uploads_in_flight"] }
	if n := inFlight(); n != 0 {
		t.Fatalf("uploads in flight before any: %v", n)
	}
	half := []byte(strings.Repeat("kernel trace line\n", 1<<16))
	var pipes []*io.PipeWriter
	var dones []<-chan error
	for i := range 2 {
		pw, done := streamedPut(t, s.S3.URL, fmt.Sprintf("traces/inflight/traces/kernel-%d.trace", i+1), int64(2*len(half)))
		if _, err := pw.Write(half); err != nil {
			t.Fatalf("%v: %v", err, <-done)
		}
		pipes, dones = append(pipes, pw), append(dones, done)
	}
	testkit.Eventually(t, 10*time.Second, "two uploads in flight", func() bool { return inFlight() == 2 })
	for i, pw := range pipes {
		if _, err := pw.Write(half); err != nil {
			t.Fatalf("%v: %v", err, <-dones[i])
		}
		pw.Close()
		if err := <-dones[i]; err != nil {
			t.Fatalf("PUT %d: %v", i+1, err)
		}
		if n := inFlight(); n != float64(1-i) {
			t.Fatalf("uploads in flight after %d of 2 ended: %v", i+1, n)
		}
	}
}
