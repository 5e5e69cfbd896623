// Package s3gw serves Cascade's bucket directory over the S3 API, so a
// trace made on a GPU machine reaches the app with the AWS CLI, rclone,
// boto3 or `cascade upload --endpoint`.
//
// The protocol is the Versity S3 Gateway's (github.com/versity/versitygw),
// run in-process through its embedgw package with its posix backend: every
// bucket is a directory under the storage root and every object a plain
// file, so object traces/<id>/metadata.json in bucket cascade is the file
// <data dir>/s3/cascade/traces/<id>/metadata.json that the scanner watches.
// The backend writes each object to an unnamed O_TMPFILE (or a file under
// the bucket's .sgwtmp directory) and links it into place when complete,
// keeps multipart parts under <bucket>/.sgwtmp/multipart until
// CompleteMultipartUpload, where this package moves them into the object
// one by one (join.go), and its locks in <root>/.vgwlocks: all dot
// directories outside any trace, which the scanner skips. A disk that fills
// fails the request with InsufficientStorage and leaves nothing.
//
// On top of the gateway this package refuses keys the scanner could not
// follow (a component that is empty after the bucket, "." or "..", one of
// the gateway's own names such as .sgwtmp, or holds a control character;
// a trace folder that starts with a dot), stores other dotfiles as they
// are (the scanner skips them), creates the configured bucket at start, and
// holds the access key pair requests are signed with (AWS Signature V4), and
// optionally a read-only pair that may get, head and list but gets
// AccessDenied for every write (see readonly.go). It also reads or makes
// the file that keeps the key pair ([LoadOrCreateKeys]), says the URL
// clients reach the endpoint at ([PublicURL]), computes the CRC64NVME
// every object and part is stored with (its ETag) faster than the backend
// would, checking a body against the checksum it came with (crc64.go),
// and counts the writes under way for /metrics
// ([Gateway.UploadsInFlight]).
//
// The posix backend resolves paths against the process's working
// directory: Start changes it to the storage root and Close changes it
// back. Everything else in the process must therefore use absolute paths
// while a gateway runs, and only one gateway runs per process.
package s3gw
