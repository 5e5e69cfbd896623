// Package l2warm warms the simulated L2 before a segment of a run.
//
// A segment (a sampled run's step of warm-up and representatives, a split
// run's share of launches) is an ordinary simulation of a subset of a
// trace's kernels, and it starts with a cold L2. In the full simulation
// its kernels find in L2 the lines earlier launches touched: the tested
// configs flush L1 between kernels, not L2 (-gpgpu_flush_l1_cache 1,
// -gpgpu_flush_l2_cache 0). A MemcpyHtoD does not warm L2 in the real
// build (a kernel after a copy of its whole footprint misses as often as
// without it), so the package writes a synthetic kernel instead: before the
// segment's first kernel, kernelwarm.traceg (or .tracez) whose warps load
// every 128-byte line the segment's kernels touch that a launch shortly
// before the segment touched too.
//
// It owns the addresses of post-processed kernel traces ([Footprint]: the
// lines a kernel's memory instructions touch, as sorted intervals, both
// .traceg and .tracez), the window of earlier launches whose lines can
// still be in L2 ([Plan]: walking back from the segment's first kernel
// until the lines seen exceed the config's L2 capacity, [L2]), and the
// warming kernel ([WriteKernel]). A [Cache] keeps footprints so the next
// segment of a trace does not read its traces again.
//
// It never decides which runs are segments; package runs does.
package l2warm
