// Package tracez reads and writes Accel-Sim 2.0's binary post-processed
// kernel trace format, ".tracez".
//
// Layout (all integers little-endian):
//
//	header text (the raw trace's header lines, each ending in '\n') and a NUL byte
//	u32 dict_size, u32 subchunk_insts
//	dict_size bytes of zstd dictionary (Cascade writes none: dict_size = 0)
//	per warp: u32 inst_count, u32 num_subchunks,
//	          num_subchunks × (u32 comp_size, one zstd frame of the
//	          subchunk's instruction lines joined by '\n', no trailing '\n')
//	footer: u32 num_tbs, then per thread block
//	          11 × u32: tb x y z, cluster id x y z, cluster cta x y z, cluster rank, warp_count
//	          per warp: u32 inst_count, u32 nsub, u64 file_offset, nsub × u32 counts
//	u64 index_offset (the file offset of the footer)
//
// Where formats.md leaves a field open, Cascade's choice: a warp's
// file_offset is the offset of its u32 inst_count in the data section, and
// the nsub counts are the instruction counts of its subchunks (every one
// subchunk_insts but the last). A warp that executed nothing is stored as
// inst_count = 0, num_subchunks = 0.
//
// The package owns only the byte format: it never decides which blocks or
// warps a kernel has.
package tracez
