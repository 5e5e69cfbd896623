package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade/tracegen"
)

const gentraceUsage = `usage: cascade gentrace [flags] <out traces dir>

Writes synthetic raw NVBit traces, as the tracer does, for tests,
benchmarks and demos: kernel traces, kernel lists with MemcpyHtoD lines and
stats files. The output depends only on the flags.

With -llm, an LLM-like trace instead: -launches kernel launches of a
prefill step then decode steps, -layers layers of six kernels a step, built
from the blocks of the real raw trace -from (a vecAdd-like kernel: see
tracegen/llm.go), with metadata.json and a made-up real_timing.json.

With -trace-list FILE (a sampling plan's traceList), the trace the tracer
gives of the full raw trace -from when it is run once per line of FILE:
those kernel traces, a raw kernel list a run, the full stats and timing
(docs/sampling.md, "Trace less next time"). The out dir is then the trace's
directory, not its traces dir.

`

// gentrace runs `cascade gentrace [flags] <out traces dir>`; args
// exclude the word "gentrace". It returns 0 on success, 2 on a usage error
// and 1 on any other error.
func gentrace(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gentrace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg               tracegen.Config
		grid, block, size string
		verbose           bool
		llm               bool
		lc                tracegen.LLMConfig
		traceList         string
	)
	fs.StringVar(&traceList, "trace-list", "", "a sampling plan's traceList: write the trace of those ranges of the full trace -from")
	fs.BoolVar(&llm, "llm", false, "an LLM-like trace (prefill then decode steps) built from the real trace -from")
	fs.StringVar(&lc.From, "from", "", "with -llm: the real raw trace directory the kernels come from")
	fs.IntVar(&lc.Launches, "launches", 300, "with -llm: kernel launches in all")
	fs.IntVar(&lc.Layers, "layers", 4, "with -llm: layers a step")
	fs.IntVar(&lc.DecodeSteps, "decode-steps", 11, "with -llm: decode steps a request")
	fs.IntVar(&cfg.Kernels, "kernels", 1, "kernels per context")
	fs.IntVar(&cfg.Contexts, "contexts", 0, "0: single-context naming (kernel-N.trace, kernelslist); N: per-context naming with N contexts")
	fs.StringVar(&grid, "grid", "4,1,1", "grid dim x,y,z")
	fs.StringVar(&block, "block", "128,1,1", "block dim x,y,z")
	fs.IntVar(&cfg.Insts, "insts", 64, "instructions per active warp (ignored with -size)")
	fs.StringVar(&size, "size", "", "approximate raw bytes per kernel, e.g. 200M, 2G (overrides -insts)")
	fs.IntVar(&cfg.Layout, "layout", 4, "leading ids per instruction line: 4 or 11")
	fs.IntVar(&cfg.Version, "version", 5, "accelsim tracer version: 3 (no immediate) or 5")
	fs.BoolVar(&cfg.XZ, "xz", false, "write kernel traces as .trace.xz")
	fs.BoolVar(&cfg.Mem, "mem", true, "memory instructions with all three address modes")
	fs.BoolVar(&cfg.LDGSTS, "ldgsts", false, "LDGSTS instruction pairs")
	fs.Float64Var(&cfg.Idle, "idle", 0, "fraction of warps (other than warp 0) that execute nothing")
	fs.Float64Var(&cfg.Empty, "empty", 0, "fraction of blocks that execute nothing")
	fs.IntVar(&cfg.Resident, "resident", 4, "blocks whose warps interleave in the trace")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	fs.BoolVar(&verbose, "v", false, "print each kernel written")
	fs.Usage = func() {
		fmt.Fprint(stderr, gentraceUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if traceList != "" {
		return gentraceLess(lc.From, traceList, fs.Arg(0), stdout, stderr)
	}
	if llm {
		if lc.From == "" {
			fmt.Fprintln(stderr, "gentrace: -llm needs -from <real trace dir>")
			return 2
		}
		res, err := tracegen.GenerateLLM(ctx, fs.Arg(0), lc)
		if err != nil {
			fmt.Fprintf(stderr, "gentrace: %v\n", err)
			return 1
		}
		var insts int64
		for _, l := range res.Launches {
			insts += l.Insts
		}
		fmt.Fprintf(stdout, "wrote an LLM-like trace of %d launches (%d warp instructions) to %s\n", len(res.Launches), insts, fs.Arg(0))
		return 0
	}
	var err error
	if cfg.Grid, err = parseDim(grid); err != nil {
		fmt.Fprintf(stderr, "gentrace: -grid: %v\n", err)
		return 2
	}
	if cfg.Block, err = parseDim(block); err != nil {
		fmt.Fprintf(stderr, "gentrace: -block: %v\n", err)
		return 2
	}
	if size != "" {
		if cfg.Bytes, err = parseSize(size); err != nil {
			fmt.Fprintf(stderr, "gentrace: -size: %v\n", err)
			return 2
		}
	}
	if verbose {
		cfg.Progress = stdout
	}
	res, err := tracegen.Generate(ctx, fs.Arg(0), cfg)
	if err != nil {
		fmt.Fprintf(stderr, "gentrace: %v\n", err)
		return 1
	}
	var lines uint64
	var bytes int64
	for _, k := range res.Kernels {
		lines += k.Lines
		bytes += k.Bytes
	}
	fmt.Fprintf(stdout, "wrote %d kernels (%d instruction lines, %d raw bytes) to %s\n", len(res.Kernels), lines, bytes, fs.Arg(0))
	return 0
}

// parseDim reads a grid or block dimension, "x[,y[,z]]".
func parseDim(s string) ([3]int, error) {
	var d [3]int
	parts := strings.Split(s, ",")
	if len(parts) > 3 {
		return d, fmt.Errorf("%q: want x[,y[,z]]", s)
	}
	d = [3]int{1, 1, 1}
	for i, p := range parts {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return d, fmt.Errorf("%q: want positive integers x[,y[,z]]", s)
		}
		d[i] = v
	}
	return d, nil
}

// parseSize reads a size in bytes with an optional K, M or G suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch t := strings.ToUpper(s); {
	case strings.HasSuffix(t, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(t, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(t, "G"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q: want a positive size such as 200M", s)
	}
	return v * mult, nil
}

// gentraceLess writes the trace of the ranges of the traceList file list
// of the full trace from into out.
func gentraceLess(from, list, out string, stdout, stderr io.Writer) int {
	if from == "" {
		fmt.Fprintln(stderr, "gentrace: -trace-list needs -from <full trace dir>")
		return 2
	}
	b, err := os.ReadFile(list)
	if err != nil {
		fmt.Fprintf(stderr, "gentrace: %v\n", err)
		return 1
	}
	ranges, err := tracegen.ParseTraceList(string(b))
	if err != nil {
		fmt.Fprintf(stderr, "gentrace: %s: %v\n", list, err)
		return 1
	}
	ks, err := tracegen.TraceLess(from, out, ranges)
	if err != nil {
		fmt.Fprintf(stderr, "gentrace: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote the trace of %d ranges (%d kernel traces) of %s to %s\n", len(ranges), len(ks), from, out)
	return 0
}
