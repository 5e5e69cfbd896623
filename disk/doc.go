// Package disk answers how much room the data directory has for traces:
// [Meter.Measure] adds up the traces' sizes from the database, asks the
// file system what is free, and warns when the traces still to be
// post-processed would outgrow the budget or the free space. Processed
// files sit next to the raw ones, so a trace still uploading or
// processing is projected at [ProcessedFactor] times its uploaded size;
// the deployment's budget is --disk-gib (CASCADE_DISK_GIB). It only
// measures: it never refuses an upload or removes a file.
package disk
