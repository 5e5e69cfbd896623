package s3gw_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cascade-sim/cascade/internal/testutil"
)

// BenchmarkPutObject sends a 64 MiB object in one PUT with the AWS SDK
// for Go over loopback; it reports MB/s (b.SetBytes). Profile the server
// side with -cpuprofile. "signed" is what the AWS CLI does over plain HTTP
// (the body's SHA-256 in the signature, computed on both sides);
// "unsigned-crc32c" is what `cascade upload --endpoint` does (an unsigned
// body with a CRC32C header the gateway verifies). The gateway computes
// the body's MD5 (the ETag) either way.
func BenchmarkPutObject(b *testing.B) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<20/16)
	sum := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))))
	s := testutil.Server(b, testutil.WithS3)
	for _, bc := range []struct {
		name     string
		unsigned bool
	}{{"signed", false}, {"unsigned-crc32c", true}} {
		b.Run(bc.name, func(b *testing.B) {
			c := client(s.S3.URL, testutil.S3Keys)
			var optFns []func(*s3.Options)
			in := &s3.PutObjectInput{Bucket: aws.String("cascade"), Key: aws.String("bench/put.trace")}
			if bc.unsigned {
				optFns = append(optFns, s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware))
				in.ChecksumCRC32C = &sum
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
