package simlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestFailureClasses: every failed run gets a class and its decisive line.
// The real-*.log files are what the real accel-sim.out (Accel-Sim dev
// 73f9fac) printed here: SM3_KEPLER_TITAN's shipped config, a vecAdd trace
// whose header says binary version 90, a raw .trace in kernelslist.g, a
// .traceg cut short, and a kernelslist.g naming a file that is not there.
func TestFailureClasses(t *testing.T) {
	tests := []struct {
		log      string
		expected int
		exit     Exit
		class    cascade.FailureClass
		line     string // a part of the decisive line
	}{
		{"real-bad-option.log", 1, Exit{Code: 1}, cascade.FailureBadConfig, "Unknown Option: '-smem_latency'"},
		{"real-binary-90.log", 1, Exit{}, cascade.FailureUnsupportedBinary, "unsupported binary version: 90"},
		{"real-raw-trace.log", 1, Exit{Code: 134}, cascade.FailureUnsupportedTrace, "Unsupported file type!"},
		{"real-truncated.log", 1, Exit{Code: 134}, cascade.FailureAssertion, "PipeReader::readLine(std::string&): Assertion `line.back() == '\\n'' failed."},
		{"real-missing-kernel.log", 2, Exit{}, cascade.FailureMissingTrace, "cat: ../tmiss/traces/kernel-2.traceg: No such file or directory"},
		{"deadlock.log", 2, Exit{Code: 134}, cascade.FailureDeadlock, "deadlock detected"},
		{"maxcycles.log", 2, Exit{}, cascade.FailureCycleLimit, "maximum cycles"},
		{"cut.log", 2, Exit{Code: -1, Signal: "killed", OOM: true}, cascade.FailureOutOfMemory, "the simulator ended with signal: killed (out of memory) in kernel uid 2"},
		{"cut.log", 2, Exit{Code: -1, Signal: "killed", TimeLimit: true}, cascade.FailureTimeLimit, "signal: killed (time limit) in kernel uid 2"},
		{"cut.log", 2, Exit{Code: -1, Signal: "killed"}, cascade.FailureOther, ""},
		{"cut.log", 2, Exit{Code: -1, Signal: "segmentation fault (core dumped)"}, cascade.FailureSegfault, "the simulator ended with signal: segmentation fault (core dumped) in kernel uid 2"},
		{"side_file_missing.log", 2, Exit{Code: 255}, cascade.FailureOther, "Could not open configuration file"},
		{"noexit.log", 2, Exit{}, cascade.FailureOther, ""},
	}
	for _, tt := range tests {
		t.Run(tt.log+"/"+string(tt.class), func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.log))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := Parse(f, tt.expected)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := p.Judged(); ok {
				t.Error("judged before Outcome was called")
			}
			o := p.Outcome(tt.exit)
			if j, ok := p.Judged(); !ok || j != o {
				t.Errorf("Judged() = %+v, %v; want the outcome %+v", j, ok, o)
			}
			if o.Succeeded || o.Class != tt.class || !strings.Contains(o.Line, tt.line) {
				t.Errorf("outcome %+v, want class %s and a line with %q", o, tt.class, tt.line)
			}
			if tt.exit.OOM && !strings.Contains(o.Reason, "out of memory") {
				t.Errorf("reason %q does not say out of memory", o.Reason)
			}
		})
	}
	// A SIGKILL from outside that the executor could not tell the cause
	// of says what usually sends one, and how to find out; one whose
	// cause was looked for and not found does not.
	killed := func(exit Exit) Outcome {
		f, _ := os.Open(filepath.Join("testdata", "cut.log"))
		defer f.Close()
		p, _ := Parse(f, 2)
		return p.Outcome(exit)
	}
	if o := killed(Exit{Code: -1, Signal: "killed", OOMUnknown: true}); o.Class != cascade.FailureOther || !strings.Contains(o.Reason, "OOM killer is the usual sender") || !strings.Contains(o.Reason, "journalctl -k") {
		t.Errorf("killed, cause unknown: %+v", o)
	}
	if o := killed(Exit{Code: -1, Signal: "killed"}); strings.Contains(o.Reason, "OOM killer") {
		t.Errorf("killed with the OOM count read and unchanged, the reason still hints at it: %q", o.Reason)
	}
	ok, _ := os.Open(filepath.Join("testdata", "ok.log"))
	defer ok.Close()
	p, _ := Parse(ok, 2)
	if o := p.Outcome(Exit{}); !o.Succeeded || o.Class != "" {
		t.Errorf("a success has class %q", o.Class)
	}
}

// TestBuildLines: the real log's first lines name the simulator's build.
func TestBuildLines(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "real-binary-90.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, _ := Parse(f, 1)
	b := p.Build()
	if len(b) != 2 || b[0] != "Accel-Sim [build accelsim-commit-73f9fac_modified_0.0_26-12-04-15-26-53]" ||
		b[1] != "GPGPU-Sim Simulator Version 4.2.0  [build gpgpu-sim_git-commit-667834cf_modified_0.0]" {
		t.Errorf("build lines %q", b)
	}
}

// TestAssertionGluedToOutput: the simulator's buffered standard output,
// cut where an abort stopped it, runs into the assertion its standard
// error printed; the decisive line is the assertion from the
// simulator's name on (seen with the real simulator and
// "-gpgpu_scheduler xyz").
func TestAssertionGluedToOutput(t *testing.T) {
	const assertion = "accel-sim.out: shader.cc:201: void shader_core_ctx::create_schedulers(): Assertion `0 && \"Undefined scheduler type\"' failed."
	log := "-gpgpu_scheduler xyz\n-trace               /tmp/qa/s3/cascade/traces/ve" + assertion + "\n"
	p, err := Parse(strings.NewReader(log), 1)
	if err != nil {
		t.Fatal(err)
	}
	o := p.Outcome(Exit{Code: 134})
	if o.Line != assertion || o.Class != cascade.FailureAssertion || !strings.HasSuffix(o.Reason, ": "+assertion) {
		t.Errorf("outcome %+v, want the line %q", o, assertion)
	}
	for _, l := range []string{"x: y.cc:1: f(): Assertion `a' failed.", "accel-sim.out: trace_parser.cc:457: Assertion `b' failed."} {
		if got := fromProgram(l); got != l {
			t.Errorf("fromProgram(%q) = %q", l, got)
		}
	}
}
