// Package posttraces is Accel-Sim's trace format conversion, the work of
// Cascade's built-in post-processor (postproc.Postprocess, which the
// server runs as `cascade postprocess`): a streaming replacement of
// Accel-Sim 2.0's post-traces-processing. [Run] turns raw NVBit kernel
// traces (formats.md §3) into per-thread-block traces the simulator reads
// (§4), .tracez through package tracez or text .traceg, and the kernel
// lists into kernelslist.g (§5). It parses no command line and reads no
// setting from the environment: its caller decides, in [Options], the
// format, the jobs, the .tracez frame size and where spill files go.
//
// # What it writes
//
// For each kernel trace named by a kernel list, kernel-N[-ctx_0x…].trace
// or .trace.xz, it writes kernel-N[-ctx_0x…].tracez, or with Options.Text
// kernel-N….traceg (kernel-N….traceg.xz for .xz input). Semantics follow
// Accel-Sim: instruction lines are grouped by thread block (linear id
// z*gy*gx + y*gx + x) and warp, in trace order; within a warp the 1st, 3rd,
// 5th … LDGSTS* lines are dropped and the 2nd, 4th … kept; blocks are
// written in linear order; a block without any instruction is skipped with
// a warning; a block that ran lists every warp 0 … ceil(threads/32)-1, idle
// ones with insts = 0. A block's ids (and with the 11-id layout its cluster
// fields) come from its first line in trace order. Text output differs
// from Accel-Sim's only in blank lines: the header is copied as read up to
// the first instruction line (Accel-Sim also echoes blank lines met later,
// and one more at the end of input); later '-' and '#' lines are appended
// to the header, as Accel-Sim's echo puts them there too.
//
// Kernel lists: given a directory, every kernelslist and
// kernelslist_ctx_0x<hex> in it is read (dotfiles and *.g ignored), and
// each of those names followed by "-" and anything: the lists of a trace
// taken in several tracer runs, one a DYNAMIC_KERNEL_LIMIT range, which
// are merged into their context's list (runs.go). Each
// kernelslist_ctx_* list gets its own kernelslist_ctx_….g. Then
// kernelslist.g is written, last, as the concatenation of all lists in a
// fixed order — kernelslist first, then context lists by increasing numeric
// context handle (names that are not hex last, by name) — so that it does
// not depend on directory order and names every kernel of every context.
// With a single list, kernelslist.g is that list mapped. Given one list
// file, only <file>.g is written (kernelslist.g when the file is
// kernelslist), as Accel-Sim does.
//
// Each kernel trace's instruction lines, counted by the pass that reads
// it, are compared with its stats row's total_reported_insts (stats.csv,
// or its context's stats_ctx_*): fewer is a file cut short at a line
// boundary, which reads as a whole one, and becomes a warning in
// Options.Warnings, never an error; so does a row whose kernel name or
// grid is not the one the trace's header says (counts.go).
//
// A run first removes any kernelslist.g and list .g left by an earlier
// run. Every output is written to a temporary dotfile beside it and renamed
// when complete; kernelslist.g comes after every kernel succeeded, so its
// presence means "ready". On any error (or a cancel) nothing more is
// renamed, temporary outputs, spill files and the outputs this run already
// renamed into place are removed, and the error names the file and line: a
// truncated xz stream, a line that fits neither instruction layout, an
// instruction field Accel-Sim would misread or abort on, a list naming a
// missing trace, an undefined list command. A write that found the
// disk full (or the quota spent) is a [FullError] naming the file being
// written: "no space left on device writing traces/kernel-3.tracez".
//
// # Input
//
// Both tracer layouts are read: 4 leading ids (cta xyz, warp) or the 2.0
// tracer's 11 (… cluster id xyz, cluster cta xyz, cluster rank). The
// layout is detected from the first instruction line — the one where a hex
// PC and an 8-digit hex mask follow the ids — and checked on every line.
// Tracer versions 3 (no trailing immediate) and 5 are both accepted: the
// instruction text is copied, never reinterpreted, except for finding the
// opcode. A header that names no tracer version, or one below 3, fails
// the kernel: Accel-Sim reads the post-processed lines of such a trace as
// beginning with thread block ids, and would misread every instruction. Each line's fields after the mask are checked, in the same pass,
// as Accel-Sim's parser (trace_parser.cc) reads them (inst.go): dest_num
// (at most 1) and its R registers, an opcode, src_num (at most 5, as the
// tracer writes; the simulator's parser reads 4 and aborts on a fifth,
// which fails a run of that kernel, not the trace) and its
// registers, mem_width, and for a memory instruction address mode 0, 1 or
// 2 with the hex addresses, stride or deltas its mask's active lanes
// imply; then an immediate, unless the header says tracer version 3 or
// older; nothing more. xz input is read through `xz -dc -T0` when xz is installed, else
// with a pure-Go decoder.
//
// # Memory
//
// A kernel is never held in memory. One pass spreads its instruction lines
// over up to 1024 spill partitions of consecutive (block, warp) keys with
// bounded buffers; partitions are then assembled in order, in parallel, each
// in memory when small (≤ 12 MB) and split again when not; a single warp
// too large for memory is streamed from its spill file. Spill files live
// in a fresh directory under Options.WorkDir (else os.TempDir()) and are
// removed when the kernel is done, fails or is cancelled.
package posttraces
