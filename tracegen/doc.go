// Package tracegen writes realistic raw NVBit traces (formats.md §3) of a
// chosen size and shape, for tests, benchmarks and demos: kernel traces,
// raw kernel lists with MemcpyHtoD lines, and stats files, in either
// naming generation, either instruction layout (4 or 11 leading ids),
// tracer version 3 or 5, plain or xz.
//
// Lines interleave the warps of several resident blocks, as the tracer's
// output does. Memory instructions use all three address modes, LDGSTS
// instructions come in (shared, global) pairs, and a fraction of warps can
// stay idle and of blocks empty. Output depends only on the [Config].
// `cascade gentrace` (cmd/cascade) parses its command line into one.
//
// [GenerateLLM] builds another kind: an LLM-like trace (prefill and
// decode steps of renamed kernels of varied grids) from the blocks of a
// real raw kernel trace, with made-up real timing (`cascade gentrace
// -llm -from DIR`).
//
// [TraceLess] writes the trace the tracer gives of a full one when it is
// run once per range of a sampling plan's traceList: the ranges' kernel
// traces, a raw kernel list a run, the full stats and timing.
package tracegen
