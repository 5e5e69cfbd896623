package postproc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/cascade-sim/cascade/accelsim"
	"github.com/cascade-sim/cascade/accelsim/posttraces"
	"github.com/cascade-sim/cascade/internal/proc"
	"github.com/cascade-sim/cascade/tracedir"
)

// The formats the built-in post-processor writes (CASCADE_TRACE_FORMAT),
// named as [accelsim.Checkout.Format] names what a simulator reads.
const (
	FormatTracez = accelsim.FormatTracez // Accel-Sim 2.0's binary format, the guide's default
	FormatTraceg = accelsim.FormatTraceg // text, .traceg (.traceg.xz from .xz input): what Accel-Sim 1.x reads
	// DefaultFormat is what the built-in writes when neither the user nor
	// the simulator says otherwise.
	DefaultFormat = FormatTracez
)

// ErrorPrefix starts the line the built-in post-processor's command
// (`cascade postprocess`) prints for the error it exits 1 with; the server
// takes the rest of that line, which names the file and line, as the
// trace's error.
const ErrorPrefix = "postprocess: "

// WarningPrefix starts each of the lines the built-in post-processor's
// command prints last, after success, for a problem of the input that
// fails nothing (Options.Warnings): the server adds the rest of each line
// to the trace's warnings (builtinWarnings).
const WarningPrefix = "postprocess warning: "

// Options configures the built-in post-processor, [Postprocess].
type Options struct {
	// Format is what it writes: FormatTracez or FormatTraceg; ""
	// means DefaultFormat.
	Format string
	// Jobs is how many kernels are processed at once, and how many
	// partitions of them are assembled at once; 0 means the CPUs this
	// process may use (runtime.GOMAXPROCS: affinity and cgroup quota).
	Jobs int
	// WorkDir holds the spill files; "" means os.TempDir(). The server
	// gives its child $CASCADE_DATA_DIR/work as CASCADE_WORK_DIR.
	WorkDir string
	// SubchunkInsts is the .tracez frame size in instructions; 0 means
	// 2048 (tracez.DefaultSubchunkInsts).
	SubchunkInsts int
	// Logger receives warnings (blocks without instructions) and
	// progress; nil discards them.
	Logger *slog.Logger
	// Warnings, when not nil, receives the problems of the input its user
	// should hear of that fail nothing: a kernel trace with fewer
	// instruction lines than its stats row's total_reported_insts, a stats
	// row whose kernel name or grid contradicts its trace's header (see
	// posttraces.Options.Warnings).
	Warnings *tracedir.Warnings
}

// Postprocess is the built-in post-processor: it turns the raw NVBit
// traces at target, a traces directory or one kernel list file, into
// Accel-Sim's input in opts.Format, with the trace format code of
// accelsim/posttraces (see its package doc for what is written and
// when). The server runs it as `cascade postprocess` in a child process
// of its own ([BuiltinCommand]), so that its memory, its CPUs (-j) and its
// log are the trace's and a stop ends it whole.
func Postprocess(ctx context.Context, target string, opts Options) error {
	format, err := ParseFormat(opts.Format)
	if err != nil {
		return err
	}
	return posttraces.Run(ctx, target, posttraces.Options{
		Jobs:          opts.Jobs,
		Text:          format == FormatTraceg,
		WorkDir:       opts.WorkDir,
		SubchunkInsts: opts.SubchunkInsts,
		Logger:        opts.Logger,
		Warnings:      opts.Warnings,
	})
}

// WriteWarnings prints the warnings of a successful run, w.Result(), one
// line each after WarningPrefix, as the built-in post-processor's command
// does last.
func WriteWarnings(out io.Writer, w *tracedir.Warnings) {
	for _, l := range w.Result() {
		fmt.Fprintf(out, "%s%s\n", WarningPrefix, strings.ReplaceAll(l, "\n", " "))
	}
}

// builtinWarnings reads back the warnings WriteWarnings printed at the
// end of a post-processing log.
func builtinWarnings(logPath string) []string {
	lines, err := proc.LastLines(logPath, tracedir.MaxWarnings+1)
	if err != nil {
		return nil
	}
	var ws []string
	for _, l := range lines {
		if r, ok := strings.CutPrefix(l, WarningPrefix); ok {
			ws = append(ws, r)
		}
	}
	return ws
}

// ParseFormat returns the format a name names, DefaultFormat for "", and
// an error for a name that is neither FormatTracez nor FormatTraceg.
func ParseFormat(name string) (string, error) {
	switch name {
	case "":
		return DefaultFormat, nil
	case FormatTracez, FormatTraceg:
		return name, nil
	}
	return "", fmt.Errorf("trace format: want %s or %s, got %q", FormatTracez, FormatTraceg, name)
}

// ChooseFormat picks what the built-in post-processor writes and says
// why: asked (CASCADE_TRACE_FORMAT) when it is not ""; else reads, the
// format the simulator reads when that is known ("" when not), for the
// reason readsWhy; else DefaultFormat. It fails on an asked name that is
// neither format.
func ChooseFormat(asked, reads, readsWhy string) (format, why string, err error) {
	switch {
	case asked != "":
		if format, err = ParseFormat(asked); err != nil {
			return "", "", fmt.Errorf("%w (CASCADE_TRACE_FORMAT)", err)
		}
		return format, "as CASCADE_TRACE_FORMAT asks", nil
	case reads != "":
		if format, err = ParseFormat(reads); err != nil {
			return "", "", fmt.Errorf("the simulator's: %w", err)
		}
		return format, "picked because " + readsWhy, nil
	}
	return DefaultFormat, "the default, what Accel-Sim 2.0 reads", nil
}

// BuiltinCommand is the command line that starts the built-in
// post-processor writing format: program, the cascade binary's
// postprocess command ([self, "postprocess"]), with the flag that picks
// the format. [Processor] appends the traces directory and -j N, as to any
// post-processor; set Config.Format to format too.
func BuiltinCommand(program []string, format string) []string {
	cmd := append([]string(nil), program...)
	if format == FormatTraceg {
		cmd = append(cmd, "--text")
	}
	return cmd
}
