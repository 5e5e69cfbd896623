// Package traces holds the full tier's tests of a trace's way in that
// start a real server (testkit/servertest): uploads through the S3
// endpoint (package s3gw) by real clients, the scanner following them
// to a complete trace (package scanner) and post-processing (package
// postproc). go test -short skips them all.
//
// They live here, not beside the code they test, so that the fast tier
// links the whole server into as few test binaries as it can: a test
// binary is linked on every run, even when -short skips every test in
// it. Each file is named after the package it tests (s3gw_*, scanner_*,
// postproc_*). The package itself is empty; its tests are traces_test.
package traces
