package servertests_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	fastcrc64 "github.com/minio/crc64nvme"

	"github.com/cascade-sim/cascade/testkit/s3test"
	"github.com/cascade-sim/cascade/testkit/servertest"
)

// BenchmarkPutObject sends a 64 MiB object in one PUT with the AWS SDK
// for Go over loopback; it reports MB/s (b.SetBytes). Profile the server
// side with -cpuprofile. "signed" is what the AWS CLI does over plain HTTP
// (the body's SHA-256 in the signature, computed on both sides);
// "unsigned-crc64nvme" is what `cascade upload --endpoint` does (an
// unsigned body with a CRC64NVME header the gateway verifies, which is
// also the ETag, so the body is hashed once, with vector instructions);
// "unsigned-crc32c" is what it did before (the gateway then also computes
// the CRC64NVME for the ETag, with Go's table-driven code).
func BenchmarkPutObject(b *testing.B) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<20/16)
	sum32 := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))))
	sum64 := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, fastcrc64.Checksum(data)))
	s := servertest.Server(b, s3test.WithS3)
	for _, bc := range []struct {
		name     string
		unsigned bool
		crc32c   bool
	}{{"signed", false, false}, {"unsigned-crc32c", true, true}, {"unsigned-crc64nvme", true, false}} {
		b.Run(bc.name, func(b *testing.B) {
			c := client(s.S3.URL, s3test.Keys)
			var optFns []func(*s3.Options)
			in := &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String("bench/put.trace")}
			if bc.unsigned {
				optFns = append(optFns, s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware))
				in.ChecksumCRC64NVME = &sum64
				if bc.crc32c {
					in.ChecksumCRC32C, in.ChecksumCRC64NVME = &sum32, nil
				}
			}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				in.Body = bytes.NewReader(data)
				if _, err := c.PutObject(context.Background(), in, optFns...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMultipartUpload sends a 64 MiB object as a multipart upload
// of four 16 MiB parts, one at a time, unsigned with a checksum header
// per part, and completes it: "crc32c" as `cascade upload --endpoint` did
// (the gateway verifies the CRC32C and computes a CRC64NVME for the part's
// ETag with Go's table-driven code), "crc64nvme" as it does now (one
// CRC64NVME, computed with vector instructions, verified and kept as the
// ETag). Both include the join of the parts at completion.
func BenchmarkMultipartUpload(b *testing.B) {
	const partSize = 16 << 20
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<20/16)
	crc32c := crc32.MakeTable(crc32.Castagnoli)
	s := servertest.Server(b, s3test.WithS3)
	c := client(s.S3.URL, s3test.Keys)
	unsigned := s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
	ctx := context.Background()
	for _, algo := range []types.ChecksumAlgorithm{types.ChecksumAlgorithmCrc32c, types.ChecksumAlgorithmCrc64nvme} {
		b.Run(strings.ToLower(string(algo)), func(b *testing.B) {
			key := aws.String("bench/multipart.trace")
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("cascade"), Key: key,
					ChecksumAlgorithm: algo, ChecksumType: types.ChecksumTypeFullObject})
				if err != nil {
					b.Fatal(err)
				}
				var parts []types.CompletedPart
				for off := 0; off < len(data); off += partSize {
					p := data[off : off+partSize]
					in := &s3.UploadPartInput{Bucket: aws.String("cascade"), Key: key, UploadId: mp.UploadId,
						PartNumber: aws.Int32(int32(off/partSize + 1)), Body: bytes.NewReader(p)}
					if algo == types.ChecksumAlgorithmCrc32c {
						in.ChecksumCRC32C = aws.String(base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.Checksum(p, crc32c))))
					} else {
						in.ChecksumCRC64NVME = aws.String(base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, fastcrc64.Checksum(p))))
					}
					out, err := c.UploadPart(ctx, in, unsigned)
					if err != nil {
						b.Fatal(err)
					}
					parts = append(parts, types.CompletedPart{PartNumber: in.PartNumber, ETag: out.ETag,
						ChecksumCRC32C: out.ChecksumCRC32C, ChecksumCRC64NVME: out.ChecksumCRC64NVME})
				}
				if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("cascade"), Key: key,
					UploadId: mp.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoopbackTCP sends b.N MiB over one loopback TCP connection
// from a buffer to nothing: no file, no HTTP, no checksum, the ceiling of
// any upload over a socket on this machine. scripts/bench-s3.sh prints it
// beside cp and the uploads.
func BenchmarkLoopbackTCP(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	received := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			received <- err
			return
		}
		defer c.Close()
		_, err = io.CopyBuffer(io.Discard, c, make([]byte, 1<<20))
		received <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for range b.N {
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	if err := <-received; err != nil {
		b.Fatal(err)
	}
}
