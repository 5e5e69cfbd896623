// Package upload copies a local NVBit trace directory into Cascade's bucket
// directory the way the Traces guide's uploader does: data files first, each
// under a dotfile temporary name that the scanner skips, fsync'd and renamed
// when complete, then metadata.json last with a files list, so the scanner
// never sees a partial file under a real name and knows exactly when the
// upload is complete.
//
// It owns nothing outside the destination trace directory it is given: it
// never talks to the server, and a test or the cascade binary calls it as a
// function ([Main] for the command line, [Upload] for everything else).
package upload
