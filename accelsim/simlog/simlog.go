package simlog

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/accelsim/kernellist"
	"github.com/cascade-sim/cascade/accelsim/l2warm"
	"github.com/cascade-sim/cascade/accelsim/simstats"
)

// Lines of the Accel-Sim log that the parser acts on (formats.md §6, checked
// against accel-sim-framework gpu-simulator/accel-sim.cc and gpgpu-sim
// gpu-sim.cc).
const (
	logProcessing  = "Processing kernel "
	logLaunching   = "launching kernel name: "
	logMemcpy      = "launching memcpy command : "
	logExit        = "GPGPU-Sim: *** exit detected ***"
	logLimit       = "GPGPU-Sim: ** break due to reaching the maximum cycles (or instructions) **"
	logDeadlock    = "deadlock detected"
	logUnsupported = "unsupported binary version:"
)

// Progress counts kernels of a run as the log tells them.
type Progress struct {
	Launched int // kernels the simulator launched
	Done     int // kernels with complete results
	Total    int // kernels expected
}

// Failure says how a simulation failed.
type Failure string

// The ways a simulation fails, in the order [Parser.Outcome] checks them.
const (
	FailureDeadlock          Failure = "deadlock"
	FailureUnsupportedBinary Failure = "unsupported_binary"
	FailureLimit             Failure = "limit"
	FailureCrash             Failure = "crash"
	FailureNoExit            Failure = "no_exit"
	FailureMissingKernels    Failure = "missing_kernels"
	// FailureTraceFormat: the simulator does not read the trace's file type.
	FailureTraceFormat Failure = "trace_format"
)

// Outcome is the verdict on a finished simulation.
type Outcome struct {
	Succeeded bool
	Failure   Failure // "" when Succeeded
	Reason    string  // a sentence for Run.error; "" when Succeeded
	// Class is the failure's class, as Accel-Sim's job_status.py classes
	// failed jobs; "" when Succeeded.
	Class cascade.FailureClass
	// Line is the log's decisive line ("deadlock detected ...", the
	// assertion, "Unknown Option: ..."); "" when the log has none.
	Line string
	// File is the kernel trace the simulator was reading last, by its
	// base name ("kernel-3.traceg"); "" when it read none.
	File string
}

// Exit is how the simulator process ended, as its executor saw it.
type Exit struct {
	Code   int    // exit status; -1 when killed by a signal
	Signal string // "killed", "aborted (core dumped)", ...; "" for a normal exit
	// OOM is set by an executor that knows the process was killed for
	// memory: the kernel's OOM killer, or Slurm's OUT_OF_MEMORY.
	OOM bool
	// OOMUnknown is set by an executor that saw a SIGKILL it did not
	// send and could not tell whether it was for memory (the cgroup's
	// OOM kill count unreadable).
	OOMUnknown bool
	// TimeLimit is set by an executor whose time limit ended the process
	// (Slurm's TIMEOUT).
	TimeLimit bool
}

// ExitFromProcessState reads an [Exit] from a finished process; nil (a
// process that never started or was never waited for) gives code -1.
func ExitFromProcessState(ps *os.ProcessState) Exit {
	if ps == nil {
		return Exit{Code: -1, Signal: "unknown"}
	}
	e := Exit{Code: ps.ExitCode()}
	if s, ok := strings.CutPrefix(ps.String(), "signal: "); ok {
		e.Signal = s
	}
	return e
}

// OK reports a normal exit with status 0.
func (e Exit) OK() bool { return e.Code == 0 && e.Signal == "" }

func (e Exit) String() string {
	s := "exit " + strconv.Itoa(e.Code)
	if e.Signal != "" {
		s = "signal: " + e.Signal
	}
	switch {
	case e.OOM:
		s += " (out of memory)"
	case e.TimeLimit:
		s += " (time limit)"
	}
	return s
}

// Parser reads an Accel-Sim log line by line as it grows. It is safe for
// concurrent use: an executor can feed it while others ask for progress.
type Parser struct {
	mu       sync.Mutex
	expected int

	// Per kernel, the parser keeps only what a kernel without a final
	// result needs: the results flow out in launch order through
	// [Parser.Take] as they become final, so a run of a million kernels
	// never has them all in memory (see seal).
	processed     []string // trace paths of uids procBase+1, ..., in creation order: uid n is processed[n-1-procBase]
	procBase      int
	lastProcessed string
	launched      []int               // uids in launch order, less those taken at the front
	nlaunched     int                 // uids launched, taken or not
	lastLaunched  int                 // the uid launched last; 0 before the first
	names         map[int]string      // uid → name from the launch line, for uids not taken
	results       []cascade.RunKernel // results not final yet, in the order their blocks ended
	byUID         map[int]int         // uid → index in results
	next          int                 // uids below next have a final result, taken or in out
	out           []cascade.RunKernel // final results not taken yet, in launch order
	gone          map[int]bool        // uids at or past next whose results TakeAll gave → truncated
	ndone         int                 // results not truncated, taken or not
	// warm are the uids of l2warm's warming kernels: simulated, never
	// results of the run (nor launches or done kernels of its progress).
	warm    map[int]bool
	pending *statsBlock
	partial []byte // an unterminated line given to Write

	exitDetected bool
	deadlock     string // the deadlock line
	limitHit     bool
	unsupported  string // the unsupported binary version line
	errLine      string // the decisive error line: the first of the highest rank
	errRank      int

	keepAll bool // tests: seal nothing, keep every result to the end, as the parser once did

	stats *simstats.Reader // nil unless ReadStats was called
	build []string         // the simulator's build lines, as printed
	last  *Outcome         // the last Outcome returned; nil before
}

// statsBlock collects one kernel's statistics, kernel_name to
// gpu_tot_sim_cycle.
type statsBlock struct {
	names  []string
	uids   []int
	cycles int64
	insn   int64
	ipc    float64
	seen   int // bit set of the fields read
}

const (
	seenCycles = 1 << iota
	seenInsn
	seenIPC
)

// NewParser returns a parser for a run of expected kernels.
func NewParser(expected int) *Parser {
	return &Parser{expected: expected, names: map[int]string{}, byUID: map[int]int{}, gone: map[int]bool{}, warm: map[int]bool{}, next: 1}
}

// ReadStats makes p read every kernel's statistics, the counters of t, into
// its results' Stats (encoded by [simstats.Encode]), and returns p. A
// kernel's statistics are complete once the next kernel's block starts or
// the log ends ([Parser.Outcome]). Call it before the first line.
func (p *Parser) ReadStats(t *simstats.Table) *Parser {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats = simstats.NewReader(t)
	return p
}

// endsStats reports whether line is one Accel-Sim's main loop prints
// between kernels (reading a kernel's header, launching it or a memcpy):
// a kernel's statistics, and the simulation time printed after them, come
// before it, so the block being read is complete. get_stats.py runs a
// block to the next kernel_name line; the lines in between are the next
// kernel's launch and progress, which no counter of a statistics list
// reads. Ending the block here makes a kernel's result final when the
// next kernel starts, not when it ends.
func endsStats(line string) bool {
	return strings.HasPrefix(line, logLaunching) || strings.HasPrefix(line, logProcessing) || strings.HasPrefix(line, logMemcpy)
}

// takeStats gives each kernel whose statistics block is complete its
// values: by launch uid, or, for a block without one, the earliest result
// without statistics.
func (p *Parser) takeStats() {
	for _, k := range p.stats.Take() {
		if p.taken(k.UID) {
			continue // its result is final: a later block for it changes nothing
		}
		i, ok := p.byUID[k.UID]
		if !ok {
			i = slices.IndexFunc(p.results, func(r cascade.RunKernel) bool { return r.Stats == nil })
		}
		if i >= 0 && i < len(p.results) {
			p.results[i].Stats = simstats.Encode(nil, k.Values)
		}
	}
}

// Build returns the simulator's build lines ("Accel-Sim [build ...]",
// "GPGPU-Sim ... [build ...]"), trimmed, in the order printed.
func (p *Parser) Build() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.build...)
}

// maxLogLine bounds the unterminated line [Parser.Write] holds back, so
// a log without newlines cannot grow the parser without limit.
const maxLogLine = 1 << 20

// Parse reads a whole log.
func Parse(r io.Reader, expected int) (*Parser, error) {
	p := NewParser(expected)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		p.Line(sc.Text())
	}
	return p, sc.Err()
}

// Write feeds raw log bytes, which need not end at a line boundary; an
// unterminated last line waits for the next Write or for [Parser.Outcome].
func (p *Parser) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	data := append(p.partial, b...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		p.line(string(data[:i]))
		data = data[i+1:]
	}
	if len(data) > maxLogLine {
		p.line(string(data)) // no newline in sight: take what there is
		data = nil
	}
	p.partial = append([]byte(nil), data...)
	return len(b), nil
}

// Line feeds one log line, without its newline.
func (p *Parser) Line(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line(line)
}

// line reads one line, and seals the results it made final.
func (p *Parser) line(line string) {
	p.readLine(line)
	p.seal()
}

func (p *Parser) readLine(line string) {
	line = strings.TrimRight(line, "\r\n \t")
	if p.stats != nil {
		p.stats.Line(line)
		switch {
		case strings.HasPrefix(line, "kernel_name"):
			p.takeStats()
		case endsStats(line):
			p.stats.Finish()
			p.takeStats()
		}
	}
	trimmed := strings.TrimSpace(line)
	if len(p.build) < 2 && strings.Contains(trimmed, "[build ") {
		p.build = append(p.build, strings.Trim(trimmed, "* "))
	}
	switch {
	case strings.HasPrefix(trimmed, logProcessing):
		p.lastProcessed = strings.TrimSpace(strings.TrimPrefix(trimmed, logProcessing))
		p.processed = append(p.processed, p.lastProcessed)
		return
	case strings.HasPrefix(trimmed, logLaunching):
		p.launch(strings.TrimPrefix(trimmed, logLaunching))
		return
	case trimmed == logExit:
		p.exitDetected = true
		return
	case strings.HasPrefix(trimmed, logLimit[:40]):
		p.limit()
		return
	case strings.HasPrefix(trimmed, logUnsupported):
		if p.unsupported == "" {
			p.unsupported = trimmed
		}
		return
	case strings.Contains(trimmed, logDeadlock):
		if p.deadlock == "" {
			p.deadlock = trimmed
		}
		return
	}
	if key, val, ok := strings.Cut(trimmed, " = "); ok {
		p.stat(strings.TrimSpace(key), strings.TrimSpace(val))
		return
	}
	if r := errorRank(trimmed); r > p.errRank {
		p.errLine, p.errRank = fromProgram(trimmed), r
	}
}

// launch reads "<name> uid: <uid> cuda_stream_id: <id>".
func (p *Parser) launch(rest string) {
	f := strings.Fields(rest)
	for i := 0; i+1 < len(f); i++ {
		if f[i] != "uid:" {
			continue
		}
		uid, err := strconv.Atoi(f[i+1])
		if err != nil || uid < 1 { // Accel-Sim counts uids from 1
			return
		}
		if p.taken(uid) {
			return // launched again after its result was final
		}
		if _, dup := p.names[uid]; !dup {
			p.launched = append(p.launched, uid)
			if p.isWarm(uid) {
				p.warm[uid] = true
			} else {
				p.nlaunched++
			}
			p.lastLaunched = uid
		}
		p.names[uid] = strings.Join(f[:i], " ")
		return
	}
}

func (p *Parser) stat(key, val string) {
	if key == "kernel_name" {
		p.commit()
		p.pending = &statsBlock{names: strings.Fields(val)}
		return
	}
	b := p.pending
	if b == nil {
		return
	}
	switch key {
	case "kernel_launch_uid":
		for _, f := range strings.Fields(val) {
			if uid, err := strconv.Atoi(f); err == nil && uid >= 1 {
				b.uids = append(b.uids, uid)
			}
		}
	case "gpu_sim_cycle":
		if n, err := strconv.ParseInt(val, 10, 64); err == nil {
			b.cycles, b.seen = n, b.seen|seenCycles
		}
	case "gpu_sim_insn":
		if n, err := strconv.ParseInt(val, 10, 64); err == nil {
			b.insn, b.seen = n, b.seen|seenInsn
		}
	case "gpu_ipc":
		// Printed with %12.4f: "nan" or "-nan" when the kernel ran 0 cycles.
		if f, err := strconv.ParseFloat(val, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			b.ipc = f
		}
		b.seen |= seenIPC
	case "gpu_tot_sim_cycle":
		p.commit() // the block's last line
	}
}

// commit turns the pending stats block into a result, once it holds at
// least the kernel's cycles and instructions.
func (p *Parser) commit() {
	b := p.pending
	p.pending = nil
	if b == nil || b.seen&(seenCycles|seenInsn) != seenCycles|seenInsn {
		return
	}
	// A block normally names one kernel. With concurrent kernels it lists
	// every kernel that ran since the last block; the one that just
	// finished is taken to be the earliest listed without a result.
	idx, uid := 0, 0
	for i, u := range b.uids {
		if !p.hasResult(u) {
			idx, uid = i, u
			break
		}
	}
	if uid == 0 {
		for _, u := range p.launched {
			if !p.hasResult(u) {
				uid = u
				break
			}
		}
	}
	r := cascade.RunKernel{
		LaunchUID:       uid,
		SimCycles:       b.cycles,
		SimInstructions: b.insn,
		IPC:             b.ipc,
	}
	// The launch line names the kernel exactly; a block's name list lines up
	// with its uid list only when both have the same length.
	r.Name = p.names[uid]
	if r.Name == "" && len(b.names) == max(len(b.uids), 1) && idx < len(b.names) {
		r.Name = b.names[idx]
	}
	if r.IPC == 0 && r.SimCycles > 0 {
		r.IPC = float64(r.SimInstructions) / float64(r.SimCycles)
	}
	// Accel-Sim gives kernels uids 1, 2, ... in the order it processes
	// their traces.
	if i := uid - 1 - p.procBase; uid >= 1 && i >= 0 && i < len(p.processed) {
		r.TraceFile = p.processed[i]
		if ref, ok := kernellist.ParseTraceFileName(r.TraceFile); ok {
			r.KernelID = &ref.ID
			if ref.Context != "" {
				r.Context = &ref.Context
			}
		}
	}
	if uid != 0 {
		p.byUID[uid] = len(p.results)
	}
	p.results = append(p.results, r)
	if l2warm.IsTrace(r.TraceFile) {
		p.warm[uid] = true // kept until sealed, so later results seal in order; never given
		return
	}
	p.ndone++
}

// isWarm reports whether the kernel of uid is a warming kernel
// (l2warm.IsTrace of the trace the simulator processed for it).
func (p *Parser) isWarm(uid int) bool {
	i := uid - 1 - p.procBase
	return i >= 0 && i < len(p.processed) && l2warm.IsTrace(p.processed[i])
}

// hasResult reports whether the kernel of uid has a result, final or not,
// taken or not.
func (p *Parser) hasResult(uid int) bool {
	if p.taken(uid) {
		return true
	}
	_, ok := p.byUID[uid]
	return ok
}

// taken reports whether the result of uid is final: sealed (below next)
// or given by TakeAll.
func (p *Parser) taken(uid int) bool {
	if uid >= 1 && uid < p.next {
		return true
	}
	_, ok := p.gone[uid]
	return ok
}

// complete reports whether the kernel of uid has a result that is not
// truncated.
func (p *Parser) complete(uid int) bool {
	if uid >= 1 && uid < p.next {
		return true // a truncated result is never sealed
	}
	if trunc, ok := p.gone[uid]; ok {
		return !trunc
	}
	i, ok := p.byUID[uid]
	return ok && !p.results[i].Truncated
}

// limit marks the kernel that ran when the simulator hit its limit. Newer
// Accel-Sim prints that kernel's (partial) statistics just before the break
// line; older versions print none, and then the last result belongs to an
// earlier, complete kernel and must stay as it is.
func (p *Parser) limit() {
	p.commit()
	p.limitHit = true
	if i, ok := p.byUID[p.lastLaunched]; ok && p.lastLaunched != 0 && !p.results[i].Truncated {
		p.results[i].Truncated = true
		if !p.warm[p.lastLaunched] {
			p.ndone--
		}
	}
}

// errorLines are the texts that make a log line an error, by rank: the
// line that says why the simulator stopped (an assertion, an exception's
// what(), an option or file it could not use) over the lines around it
// ("terminate called ...", "Aborted").
var errorLines = [][]string{
	3: {
		"Assertion", "what():", "Unknown Option", "Cannot parse value", "Could not open", "Unable to open file",
		"error while loading shared libraries", "Segmentation fault",
	},
	2: {"ERROR", "No such file or directory"},
	1: {"terminate called", "Aborted"},
}

// fromProgram is an assertion's line from the simulator's name on
// ("accel-sim.out: shader.cc:201: ...: Assertion `...' failed."). The
// simulator's standard output is buffered and its standard error is not,
// and both go to the log: an abort leaves the assertion glued to the end
// of a part of an output line ("-trace  /data/.../traces/veaccel-sim.out:
// shader.cc:201: ..."), which is no part of it.
func fromProgram(line string) string {
	a := strings.Index(line, "Assertion")
	if a < 0 {
		return line
	}
	if i := strings.LastIndex(line[:a], simulatorName+": "); i > 0 {
		return line[i:]
	}
	return line
}

// simulatorName is the name Accel-Sim's binary has, which the C
// library's assertion message starts with.
const simulatorName = "accel-sim.out"

// errorRank is how decisive an error line is; 0 for a line that is none.
func errorRank(line string) int {
	for r := len(errorLines) - 1; r > 0; r-- {
		for _, s := range errorLines[r] {
			if strings.Contains(line, s) {
				return r
			}
		}
	}
	return 0
}

// unsupportedFileType is what Accel-Sim's trace reader throws for a trace
// file it cannot read (1.x for .tracez).
const unsupportedFileType = "Unsupported file type"

// Progress counts launched and finished kernels so far.
func (p *Parser) Progress() Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Progress{Launched: p.nlaunched, Done: p.ndone, Total: p.expected}
}

func (p *Parser) done() int { return p.ndone }
