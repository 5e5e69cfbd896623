package upload

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/term"
)

const usage = `usage: cascade upload <local trace dir> [--run-name NAME] [--to DIR] [--force]
                      [--data-dir DIR] [--bucket NAME] [--prefix PATH]

Copies a trace directory into the app's bucket, at
$CASCADE_DATA_DIR/s3/$CASCADE_BUCKET/$CASCADE_PREFIX/<run name>/ (defaults
./cascade-data, cascade, traces), or into --to DIR. Data files go first,
metadata.json last with a files list, so the app sees the upload complete only
when it is. Run the same command again to resume an interrupted upload.

`

// Main runs the upload command: args are what follows "cascade upload". It
// returns the exit status: 0 on success, 1 on failure, 2 for bad usage, 130
// when ctx was cancelled (Ctrl-C). The summary goes to stdout; progress and
// errors go to stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cascade upload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	runName := fs.String("run-name", "", "trace name (default: metadata.json run_name, else the directory's name)")
	to := fs.String("to", "", "write the trace to exactly this directory")
	force := fs.Bool("force", false, "overwrite a trace already at the destination")
	dataDir := fs.String("data-dir", envOr("CASCADE_DATA_DIR", "./cascade-data"), "the app's data directory ($CASCADE_DATA_DIR)")
	bucket := fs.String("bucket", envOr("CASCADE_BUCKET", "cascade"), "bucket name ($CASCADE_BUCKET)")
	prefix := fs.String("prefix", envOr("CASCADE_PREFIX", "traces"), "prefix inside the bucket ($CASCADE_PREFIX)")

	// The trace directory comes first in the documented form, and the flag
	// package stops at the first argument that is not a flag, so parse
	// around positional arguments.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
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
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "cascade upload: want one trace directory, have %d arguments\n", len(pos))
		fs.Usage()
		return 2
	}

	opts := Options{Source: pos[0], RunName: *runName, Dest: *to, Force: *force, Progress: stderr}
	if *to == "" {
		opts.PrefixDir = filepath.Join(*dataDir, "s3", *bucket, *prefix)
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts.Terminal = true
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			opts.Width = w
		}
	}
	res, err := Upload(ctx, opts)
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(stderr, "%v\nNo partial file was left under a real name; run the same command again to resume.\n", err)
		return 130
	case errors.Is(err, ErrExists):
		fmt.Fprintf(stderr, "%v\nPass --force to overwrite it, or --run-name to upload under another name.\n", err)
		return 1
	default:
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "uploaded %s to %s: %d files, %s copied", res.RunName, res.Dest, len(res.Files), formatBytes(res.CopiedBytes))
	if res.Skipped > 0 {
		fmt.Fprintf(stdout, ", %d already there", res.Skipped)
	}
	if res.Removed > 0 {
		fmt.Fprintf(stdout, ", %d old files removed", res.Removed)
	}
	fmt.Fprintln(stdout)
	return 0
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
