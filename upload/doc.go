// Package upload copies a local NVBit trace directory into a Cascade, the
// way the Traces guide's uploader does: data files first, then
// metadata.json last with a files list, so the scanner never takes a
// partial upload for a complete one and knows exactly when it is
// complete. [Upload] writes to one of two places:
//
//   - a trace directory on this machine (Options.Dest, or under
//     Options.PrefixDir, the bucket directory's prefix): each file under a
//     dotfile temporary name that the scanner skips, fsync'd and renamed
//     when complete;
//   - a running server's S3 endpoint (Options.Endpoint, its s3gw
//     gateway), over HTTP with the AWS SDK, signed with a key pair: large files as multipart uploads with parts sent in parallel,
//     each body carrying a checksum the endpoint verifies.
//
// Run again after a failure or a cancel, it resumes: files already there
// at the right size and modification time, and parts of an unfinished
// multipart upload whose checksums match, are not sent again. A file of
// the right size but another time (traced again since, or written by
// another tool) is sent again. A local upload gives each file the
// source's modification time (as cp -p does); an upload to an Endpoint
// sends it as the object's user metadata mtime, in seconds since the
// epoch, as rclone does. It writes nothing outside the
// destination trace directory or prefix it is given, and talks to no
// server but the S3 endpoint it is given. The `cascade upload` command
// (cmd/cascade) parses its command line into [Options].
package upload
