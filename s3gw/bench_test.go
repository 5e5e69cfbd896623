package s3gw_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cascade-sim/cascade/internal/testutil"
)

// BenchmarkPutObject sends a 64 MiB object in one PUT with the AWS SDK
// for Go over loopback; it reports MB/s (b.SetBytes). Profile the server
// side with -cpuprofile.
func BenchmarkPutObject(b *testing.B) {
	s := testutil.Server(b, testutil.WithS3)
	c := client(s.S3.URL, testutil.S3Keys)
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<20/16)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		_, err := c.PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String("cascade"), Key: aws.String("bench/put.trace"), Body: bytes.NewReader(data),
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
