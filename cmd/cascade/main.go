package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cascade-sim/cascade/internal/buildinfo"
)

const usage = `usage: cascade <command> [arguments]

commands:
  serve         watch the bucket, post-process traces, serve the API and UI
  upload        copy a trace directory into the bucket (cascade upload -h)
  postprocess   turn raw traces into Accel-Sim input (cascade postprocess -h)
  gentrace      write synthetic raw traces for tests and benchmarks
  version       print the build's version, commit and date (also --version)
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "upload":
		return uploadCmd(ctx, args[1:], stdout, stderr)
	case "postprocess":
		return postprocess(ctx, args[1:], stdout, stderr)
	case "gentrace":
		return gentrace(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, buildinfo.Get())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "cascade: unknown command %q\n\n%s", args[0], usage)
	return 2
}
