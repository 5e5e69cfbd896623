package servertests_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc64"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

func crc64nvme(b []byte) string {
	sum := crc64.Checksum(b, crc64.MakeTable(0x9a6c9329ac4bc9b5))
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, sum))
}

func contentMD5(b []byte) *string {
	sum := md5.Sum(b)
	return aws.String(base64.StdEncoding.EncodeToString(sum[:]))
}

// TestETagsAreChecksumsAndContentMD5IsChecked: the gateway computes no
// MD5 of what it stores; an object's and a part's ETag is the CRC64NVME of
// its bytes, and a multipart object's that of the whole object. A
// Content-MD5 a client sends is still checked: a wrong one (a body changed
// on the way) is refused with BadDigest and nothing is stored.
func TestETagsAreChecksumsAndContentMD5IsChecked(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	c := client(s.S3.URL, s3test.Keys)
	ctx := context.Background()
	bucket := filepath.Join(s.DataDir, "s3", "cascade")
	data := bytes.Repeat([]byte("etag kernel trace line\n"), 6<<20/23)
	other := append(bytes.Clone(data[:len(data)-1]), '!')

	t.Run("put", func(t *testing.T) {
		key := "traces/etag/traces/kernel-1.trace"
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: &key, Body: bytes.NewReader(data), ContentMD5: contentMD5(other)})
		if apiCode(err) != "BadDigest" {
			t.Fatalf("PUT with the Content-MD5 of other bytes: %v, want BadDigest", err)
		}
		if _, err := os.Stat(filepath.Join(bucket, key)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("object after the refused PUT: %v, want none", err)
		}
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: &key, Body: bytes.NewReader(data), ContentMD5: contentMD5(data)})
		if err != nil {
			t.Fatalf("PUT with the right Content-MD5: %v", err)
		}
		want := `"CRC64NVME-` + crc64nvme(data) + `"`
		if got := aws.ToString(out.ETag); got != want {
			t.Errorf("PUT ETag %s, want %s", got, want)
		}
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("cascade"), Key: &key})
		if err != nil || aws.ToString(head.ETag) != want {
			t.Errorf("HEAD ETag %s (%v), want %s", aws.ToString(head.ETag), err, want)
		}
	})

	t.Run("multipart", func(t *testing.T) {
		key := "traces/etag/traces/kernel-2.trace"
		mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: &key})
		if err != nil {
			t.Fatal(err)
		}
		part := func(n int32, body, md5Of []byte) (*s3.UploadPartOutput, error) {
			return c.UploadPart(ctx, &s3.UploadPartInput{
				Bucket: aws.String("cascade"), Key: &key, UploadId: mp.UploadId, PartNumber: aws.Int32(n),
				Body: bytes.NewReader(body), ContentMD5: contentMD5(md5Of),
			})
		}
		tail := []byte("the last part\n")
		if _, err := part(1, data, other); apiCode(err) != "BadDigest" {
			t.Fatalf("part with the Content-MD5 of other bytes: %v, want BadDigest", err)
		}
		p1, err := part(1, data, data)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := part(2, tail, tail)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			got  *string
			body []byte
		}{{p1.ETag, data}, {p2.ETag, tail}} {
			if want := `"CRC64NVME-` + crc64nvme(p.body) + `"`; aws.ToString(p.got) != want {
				t.Errorf("part ETag %s, want %s", aws.ToString(p.got), want)
			}
		}
		out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
			Bucket: aws.String("cascade"), Key: &key, UploadId: mp.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
				{PartNumber: aws.Int32(1), ETag: p1.ETag}, {PartNumber: aws.Int32(2), ETag: p2.ETag},
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		whole := append(bytes.Clone(data), tail...)
		if want := `"CRC64NVME-` + crc64nvme(whole) + `"`; aws.ToString(out.ETag) != want {
			t.Errorf("object ETag %s, want %s", aws.ToString(out.ETag), want)
		}
		got, err := os.ReadFile(filepath.Join(bucket, key))
		if err != nil || !bytes.Equal(got, whole) {
			t.Fatalf("object: %v, %d bytes, want %d", err, len(got), len(whole))
		}
	})
}

// TestCRC64NVMEHeaderIsChecked: an unsigned body (as `cascade upload`
// sends them) whose x-amz-checksum-crc64nvme header does not match is
// refused with BadDigest and leaves nothing, as a PUT and as a part of a
// multipart upload created with CRC64NVME; matching ones are stored with
// that checksum as their ETag, and the completed object's is the whole
// object's CRC64NVME.
func TestCRC64NVMEHeaderIsChecked(t *testing.T) {
	s := servertest.Server(t, s3test.WithS3)
	c := client(s.S3.URL, s3test.Keys)
	unsigned := s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
	ctx := context.Background()
	bucket := filepath.Join(s.DataDir, "s3", "cascade")
	data := bytes.Repeat([]byte("crc64 kernel trace line\n"), 6<<20/24)
	other := append(bytes.Clone(data[:len(data)-1]), '!')

	key := "traces/crc64/traces/kernel-1.trace"
	put := func(body []byte, sum string) (*s3.PutObjectOutput, error) {
		return c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: &key,
			Body: bytes.NewReader(body), ChecksumCRC64NVME: aws.String(sum)}, unsigned)
	}
	if _, err := put(other, crc64nvme(data)); apiCode(err) != "BadDigest" {
		t.Fatalf("PUT of other bytes with the data's CRC64NVME: %v, want BadDigest", err)
	}
	if _, err := os.Stat(filepath.Join(bucket, key)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("object after the refused PUT: %v, want none", err)
	}
	out, err := put(data, crc64nvme(data))
	if err != nil {
		t.Fatalf("PUT with the right CRC64NVME: %v", err)
	}
	if want := `"CRC64NVME-` + crc64nvme(data) + `"`; aws.ToString(out.ETag) != want {
		t.Errorf("PUT ETag %s, want %s", aws.ToString(out.ETag), want)
	}

	key = "traces/crc64/traces/kernel-2.trace"
	mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: &key,
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc64nvme, ChecksumType: types.ChecksumTypeFullObject})
	if err != nil {
		t.Fatal(err)
	}
	part := func(n int32, body []byte, sum string) (*s3.UploadPartOutput, error) {
		return c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("cascade"), Key: &key, UploadId: mp.UploadId,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(body), ChecksumCRC64NVME: aws.String(sum)}, unsigned)
	}
	if _, err := part(1, other, crc64nvme(data)); apiCode(err) != "BadDigest" {
		t.Fatalf("part of other bytes with the data's CRC64NVME: %v, want BadDigest", err)
	}
	tail := []byte("the last part\n")
	p1, err := part(1, data, crc64nvme(data))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := part(2, tail, crc64nvme(tail))
	if err != nil {
		t.Fatal(err)
	}
	if want := `"CRC64NVME-` + crc64nvme(data) + `"`; aws.ToString(p1.ETag) != want || aws.ToString(p1.ChecksumCRC64NVME) != crc64nvme(data) {
		t.Errorf("part ETag %s and checksum %s, want %s", aws.ToString(p1.ETag), aws.ToString(p1.ChecksumCRC64NVME), want)
	}
	whole := append(bytes.Clone(data), tail...)
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: aws.String("cascade"), Key: &key, UploadId: mp.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
			{PartNumber: aws.Int32(1), ETag: p1.ETag, ChecksumCRC64NVME: p1.ChecksumCRC64NVME},
			{PartNumber: aws.Int32(2), ETag: p2.ETag, ChecksumCRC64NVME: p2.ChecksumCRC64NVME},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"CRC64NVME-` + crc64nvme(whole) + `"`; aws.ToString(done.ETag) != want {
		t.Errorf("object ETag %s, want %s", aws.ToString(done.ETag), want)
	}
	got, err := os.ReadFile(filepath.Join(bucket, key))
	if err != nil || !bytes.Equal(got, whole) {
		t.Fatalf("object: %v, %d bytes, want %d", err, len(got), len(whole))
	}
}
