package posttraces

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
)

const usage = "usage: cascade postprocess <traces dir | kernelslist file> [-j N] [--text]"

// Main implements `cascade postprocess <dir or kernelslist file> [-j N]
// [--text]`; args exclude the word "postprocess". It returns 0 on success,
// 2 on a usage error and 1 on any other error, which it prints to stderr
// naming the file and line.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var (
		opts   Options
		target string
	)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--text" || a == "-text":
			opts.Text = true
		case a == "-j" || a == "--j" || a == "-jobs" || a == "--jobs":
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "postprocess: %s needs a value\n%s\n", a, usage)
				return 2
			}
			i++
			n, err := strconv.Atoi(args[i])
			if err != nil || n < 1 {
				fmt.Fprintf(stderr, "postprocess: -j %q: want a positive integer\n%s\n", args[i], usage)
				return 2
			}
			opts.Jobs = n
		case strings.HasPrefix(a, "-j") && len(a) > 2:
			v := strings.TrimPrefix(strings.TrimPrefix(a, "-j"), "=")
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				fmt.Fprintf(stderr, "postprocess: %q: want -j N with N a positive integer\n%s\n", a, usage)
				return 2
			}
			opts.Jobs = n
		case a == "-h" || a == "--help" || a == "-help":
			fmt.Fprintln(stdout, usage)
			return 0
		case strings.HasPrefix(a, "-") && a != "-":
			fmt.Fprintf(stderr, "postprocess: unknown flag %s\n%s\n", a, usage)
			return 2
		case target == "":
			target = a
		default:
			fmt.Fprintf(stderr, "postprocess: more than one target (%s, %s)\n%s\n", target, a, usage)
			return 2
		}
	}
	if target == "" {
		fmt.Fprintf(stderr, "postprocess: missing traces dir or kernelslist file\n%s\n", usage)
		return 2
	}
	opts.Logger = slog.New(slog.NewTextHandler(stderr, nil)).With("component", "posttraces")
	if err := Run(ctx, target, opts); err != nil {
		fmt.Fprintf(stderr, "postprocess: %v\n", err)
		return 1
	}
	return 0
}
