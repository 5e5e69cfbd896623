package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade/postproc"
	"github.com/cascade-sim/cascade/tracedir"
)

const postprocessUsage = `usage: cascade postprocess <traces dir | kernelslist file> [-j N] [--text]

The built-in post-processor: turns raw NVBit traces into Accel-Sim's input.
Each kernel trace a kernel list names, kernel-N.trace or kernel-N.trace.xz,
becomes kernel-N.tracez, or with --text kernel-N.traceg (kernel-N.traceg.xz
from .xz input); the kernel lists become kernelslist.g, written last.

Which format: .tracez, the default, is read only by Accel-Sim 2.0.
Accel-Sim's public dev branch (1.x, what most users build) reads .traceg
and .traceg.xz only, and aborts with "Unsupported file type!" on .tracez:
for it, give --text. cascade serve picks the format from
CASCADE_ACCELSIM_DIR's trace parser, or CASCADE_TRACE_FORMAT=traceg|tracez.

Given a directory, a trace's traces/ folder, it reads every kernelslist and
kernelslist_ctx_0x<hex> in it (given the trace's folder, which holds
traces/ and metadata.json, it says to give traces/); given one list file,
it writes <file>.g. On an error it removes what it
wrote and prints one line saying why, naming the file and line where one is
at fault. A kernel trace with fewer instruction lines than its stats row's
total_reported_insts (cut short) is processed, and warned of in one of the
last lines, starting "postprocess warning: ". cascade serve runs it for
every uploaded trace unless CASCADE_POSTPROCESS_CMD names another
post-processor.

flags:
  -j N     kernels processed at once (default: the CPUs this process may use)
  --text   write .traceg instead of .tracez (CASCADE_TRACE_FORMAT=traceg of serve)

environment:
  CASCADE_WORK_DIR        directory of the spill files (default: the system's temporary directory)
  TRACEZ_SUBCHUNK_INSTS   instructions per .tracez frame (default 2048)
`

// postprocess runs `cascade postprocess <dir or kernelslist file> [-j N]
// [--text]`; args exclude the word "postprocess". It returns 0 on
// success, 2 on a usage error and 1 on any other error, which it prints to
// stderr as one line starting with postproc.ErrorPrefix. On success its
// last lines are the warnings, each starting with postproc.WarningPrefix.
func postprocess(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, target, err := parsePostprocess(args)
	switch {
	case errors.Is(err, errHelp):
		fmt.Fprint(stdout, postprocessUsage)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "%s%v\n%s(cascade postprocess -h says more)\n", postproc.ErrorPrefix, err, postprocessUsage[:strings.Index(postprocessUsage, "\n")+1])
		return 2
	}
	if v := env("TRACEZ_SUBCHUNK_INSTS", ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "%sTRACEZ_SUBCHUNK_INSTS=%q: not a positive integer\n", postproc.ErrorPrefix, v)
			return 1
		}
		opts.SubchunkInsts = n
	}
	opts.Logger = slog.New(slog.NewTextHandler(stderr, nil)).With("component", "posttraces")
	opts.Warnings = &tracedir.Warnings{}
	if err := postproc.Postprocess(ctx, target, opts); err != nil {
		fmt.Fprintf(stderr, "%s%v\n", postproc.ErrorPrefix, err)
		return 1
	}
	postproc.WriteWarnings(stderr, opts.Warnings) // last: cascade serve reads them from the log's end
	return 0
}

// errHelp is parsePostprocess's answer to -h.
var errHelp = errors.New("help requested")

// parsePostprocess reads postprocess's arguments and CASCADE_WORK_DIR. It
// takes Accel-Sim's forms of -j: "-j 4", "-j4", "-j=4", "--jobs 4".
func parsePostprocess(args []string) (postproc.Options, string, error) {
	opts := postproc.Options{Format: postproc.FormatTracez, WorkDir: env("CASCADE_WORK_DIR", "")}
	var target string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--text" || a == "-text":
			opts.Format = postproc.FormatTraceg
		case a == "-j" || a == "--j" || a == "-jobs" || a == "--jobs":
			if i+1 >= len(args) {
				return opts, "", fmt.Errorf("%s needs a value", a)
			}
			i++
			n, err := strconv.Atoi(args[i])
			if err != nil || n < 1 {
				return opts, "", fmt.Errorf("-j %q: want a positive integer", args[i])
			}
			opts.Jobs = n
		case strings.HasPrefix(a, "-j") && len(a) > 2:
			v := strings.TrimPrefix(strings.TrimPrefix(a, "-j"), "=")
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return opts, "", fmt.Errorf("%q: want -j N with N a positive integer", a)
			}
			opts.Jobs = n
		case a == "-h" || a == "--help" || a == "-help":
			return opts, "", errHelp
		case strings.HasPrefix(a, "-") && a != "-":
			return opts, "", fmt.Errorf("unknown flag %s", a)
		case target == "":
			target = a
		default:
			return opts, "", fmt.Errorf("more than one target (%s, %s)", target, a)
		}
	}
	if target == "" {
		return opts, "", fmt.Errorf("missing traces dir or kernelslist file")
	}
	return opts, target, nil
}
