package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/term"

	"github.com/cascade-sim/cascade/upload"
)

const uploadUsage = `usage: cascade upload <local trace dir> [--run-name NAME] [--force]
                      [--endpoint URL [--access-key KEY --secret-key SECRET] [--parallel N]]
                      [--to DIR] [--data-dir DIR] [--bucket NAME] [--prefix PATH]

Uploads a trace directory to a Cascade. With --endpoint, to its S3 endpoint
(the URL cascade serve prints), signed with the key pair from the flags,
else CASCADE_S3_ACCESS_KEY/CASCADE_S3_SECRET_KEY, else AWS_ACCESS_KEY_ID/
AWS_SECRET_ACCESS_KEY; large files go as multipart uploads with parallel
parts. Without it, copies into this machine's bucket directory,
$CASCADE_DATA_DIR/s3/$CASCADE_BUCKET/$CASCADE_PREFIX/<run name>/ (defaults
./cascade-data, cascade, traces), or into --to DIR. Data files go first,
metadata.json last with a files list, so the app sees the upload complete only
when it is. Run the same command again to resume an interrupted upload: files
already there at the right size and modification time, and parts already
there with the right checksums, are not sent again; a file changed since is.

`

// uploadCmd runs `cascade upload`: args are what follows "upload". It
// returns the exit status: 0 on success, 1 on failure, 2 for bad usage, 130
// when ctx was cancelled (Ctrl-C). The summary goes to stdout; progress and
// errors go to stderr.
func uploadCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := parseUpload(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		return 2
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts.Terminal = true
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			opts.Width = w
		}
	}
	res, err := upload.Upload(ctx, opts)
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(stderr, "%v\nNo partial file was left under a real name; run the same command again to resume.\n", err)
		return 130
	case errors.Is(err, upload.ErrExists):
		fmt.Fprintf(stderr, "%v\nPass --force to overwrite it, or --run-name to upload under another name.\n", err)
		return 1
	default:
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintln(stdout, res)
	return 0
}

// parseUpload reads upload's flags and CASCADE_* variables into the
// options of upload.Upload, progress going to stderr. It prints a usage
// error to stderr before it returns it, and the usage for -h, returning
// flag.ErrHelp.
func parseUpload(args []string, stderr io.Writer) (upload.Options, error) {
	fs := flag.NewFlagSet("cascade upload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, uploadUsage)
		fs.PrintDefaults()
	}
	runName := fs.String("run-name", "", "trace name (default: metadata.json run_name, else the directory's name)")
	to := fs.String("to", "", "write the trace to exactly this directory")
	force := fs.Bool("force", false, "overwrite a trace already at the destination")
	dataDir := fs.String("data-dir", env("CASCADE_DATA_DIR", "./cascade-data"), "the app's data directory ($CASCADE_DATA_DIR)")
	bucket := fs.String("bucket", env("CASCADE_BUCKET", "cascade"), "bucket name ($CASCADE_BUCKET)")
	prefix := fs.String("prefix", env("CASCADE_PREFIX", "traces"), "prefix inside the bucket ($CASCADE_PREFIX)")
	endpoint := fs.String("endpoint", "", "a Cascade's S3 endpoint URL, http://host:7070")
	accessKey := fs.String("access-key", env("CASCADE_S3_ACCESS_KEY", env("AWS_ACCESS_KEY_ID", "")), "S3 access key ($CASCADE_S3_ACCESS_KEY, else $AWS_ACCESS_KEY_ID)")
	secretKey := new(string)
	fillSecret := secretVar(fs, secretKey, "secret-key", []string{"CASCADE_S3_SECRET_KEY", "AWS_SECRET_ACCESS_KEY"}, "S3 secret key ($CASCADE_S3_SECRET_KEY, else $AWS_SECRET_ACCESS_KEY)")
	parallel := fs.Int("parallel", upload.DefaultParallel, "parts sent at once with --endpoint")

	// The trace directory comes first in the documented form, and the flag
	// package stops at the first argument that is not a flag, so parse
	// around positional arguments.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return upload.Options{}, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...) // after "--" everything is a directory
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	fillSecret()
	// usage prints a usage error as the flag package does its own.
	usage := func(msg string) error {
		fmt.Fprintln(stderr, "cascade upload: "+msg)
		return errors.New(msg)
	}
	if len(pos) != 1 {
		err := usage(fmt.Sprintf("want one trace directory, have %d arguments", len(pos)))
		fs.Usage()
		return upload.Options{}, err
	}

	opts := upload.Options{Source: pos[0], RunName: *runName, Dest: *to, Force: *force, Progress: stderr}
	switch {
	case *endpoint != "" && *to != "":
		return opts, usage("give --endpoint or --to, not both")
	case *endpoint != "":
		if *accessKey == "" || *secretKey == "" {
			return opts, usage("--endpoint needs a key pair: --access-key and --secret-key, CASCADE_S3_ACCESS_KEY and CASCADE_S3_SECRET_KEY, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (cascade serve prints them)")
		}
		opts.Endpoint, opts.Bucket, opts.Prefix, opts.Parallel = *endpoint, *bucket, *prefix, *parallel
		opts.Keys = upload.Keys{AccessKey: *accessKey, SecretKey: *secretKey}
	case *to == "":
		opts.PrefixDir = filepath.Join(*dataDir, "s3", *bucket, *prefix)
	}
	return opts, nil
}
