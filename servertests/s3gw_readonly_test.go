package servertests_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/s3gw"
	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

var readOnlyKeys = s3gw.Keys{AccessKey: "CASCADEREADONLYKEY01", SecretKey: "cascade-read-only-secret-0123456789abcdef"}

// TestReadOnlyKeys: the read-only pair gets, heads and lists; every write
// (put, multipart, copy, delete, ACL and policy changes) is refused with
// AccessDenied and changes nothing on disk. The read-write pair still
// writes.
func TestReadOnlyKeys(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3, func(c *app.Config) { c.S3ReadOnlyKeys = readOnlyKeys })
	ctx := context.Background()
	rw, ro := client(s.S3.URL, s3test.Keys), client(s.S3.URL, readOnlyKeys)
	bucket := aws.String("cascade")
	const key = "traces/ro/traces/kernel-1.trace"
	if _, err := rw.PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: aws.String(key), Body: strings.NewReader("kernel 1")}); err != nil {
		t.Fatalf("read-write PutObject: %v", err)
	}

	// Reads.
	obj, err := ro.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: aws.String(key)})
	if err != nil {
		t.Fatalf("GetObject: %v", err)
	}
	body, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if string(body) != "kernel 1" {
		t.Fatalf("GetObject: %q", body)
	}
	if _, err := ro.HeadObject(ctx, &s3.HeadObjectInput{Bucket: bucket, Key: aws.String(key)}); err != nil {
		t.Errorf("HeadObject: %v", err)
	}
	if _, err := ro.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: bucket}); err != nil {
		t.Errorf("HeadBucket: %v", err)
	}
	list, err := ro.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: bucket, Prefix: aws.String("traces/ro/")})
	if err != nil || len(list.Contents) != 1 || *list.Contents[0].Key != key {
		t.Fatalf("ListObjectsV2: %+v %v", list, err)
	}

	// Writes.
	before := files(t, s.DataDir)
	other := aws.String("traces/ro/traces/kernel-2.trace")
	writes := map[string]func() error{
		"PutObject": func() error {
			_, err := ro.PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: other, Body: strings.NewReader("x")})
			return err
		},
		"PutObject over an existing key": func() error {
			_, err := ro.PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: aws.String(key), Body: strings.NewReader("overwritten")})
			return err
		},
		"CreateMultipartUpload": func() error {
			_, err := ro.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: other})
			return err
		},
		"CopyObject": func() error {
			_, err := ro.CopyObject(ctx, &s3.CopyObjectInput{Bucket: bucket, Key: other, CopySource: aws.String("cascade/" + key)})
			return err
		},
		"DeleteObject": func() error {
			_, err := ro.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String(key)})
			return err
		},
		"DeleteObjects": func() error {
			out, err := ro.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: bucket, Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String(key)}}}})
			if err == nil && len(out.Errors) == 1 {
				return errorCode(*out.Errors[0].Code)
			}
			return err
		},
		"PutBucketAcl": func() error {
			_, err := ro.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: bucket, ACL: types.BucketCannedACLPublicReadWrite})
			return err
		},
		"PutBucketPolicy": func() error {
			_, err := ro.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: bucket, Policy: aws.String(`{"Version":"2012-10-17","Statement":[]}`)})
			return err
		},
		"DeleteBucket": func() error {
			_, err := ro.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: bucket})
			return err
		},
		"CreateBucket": func() error {
			_, err := ro.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("ro-bucket")})
			return err
		},
	}
	for name, write := range writes {
		err := write()
		if code := apiCode(err); code != "AccessDenied" && err != errorCode("AccessDenied") {
			t.Errorf("%s with the read-only keys: %v, want AccessDenied", name, err)
		}
	}
	after := files(t, s.DataDir)
	for rel, size := range after {
		if strings.HasPrefix(rel, "s3/") && !strings.HasPrefix(rel, "s3/.vgwlocks/") && before[rel] != size {
			t.Errorf("changed by a refused write: %s", rel)
		}
	}
	for rel := range before {
		if _, ok := after[rel]; !ok && strings.HasPrefix(rel, "s3/") {
			t.Errorf("removed by a refused write: %s", rel)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(s.TraceDir("ro"), "traces", "kernel-1.trace")); !bytes.Equal(got, []byte("kernel 1")) {
		t.Errorf("the object holds %q", got)
	}

	// The read-write keys still write, and delete.
	if _, err := rw.PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: other, Body: strings.NewReader("kernel 2")}); err != nil {
		t.Fatalf("read-write PutObject: %v", err)
	}
	if _, err := rw.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: other}); err != nil {
		t.Fatalf("read-write DeleteObject: %v", err)
	}
}

// errorCode is a per-object error code of DeleteObjects.
type errorCode string

func (e errorCode) Error() string { return string(e) }
