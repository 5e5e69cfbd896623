// Package kernellist reads and writes Accel-Sim's processed kernel lists
// (kernelslist.g, formats.md §5): which kernel trace files a simulation runs,
// in order, with the memory copies between them. It names a kernel by its
// id and CUDA context ([Ref]) and writes the subset of a list a run asks for,
// with links to the trace files it names ([WriteSubset]).
package kernellist
