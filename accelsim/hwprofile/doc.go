// Package hwprofile reads the hardware counters a profiler measured for
// a traced program's kernels (formats.md §9): Nsight Compute's
// `ncu --csv --page raw` files and nvprof's `--csv --print-gpu-trace`
// files (with or without --metrics), one launch at a time in bounded
// memory, and the declared table (mappings.txt) of which counter stands
// for which simulator statistic, as Accel-Sim's correlator
// (util/plotting/correl_mappings.py) pairs them.
//
// A Reader gives the header (the profiler, its metric columns and their
// units) and then each profiled launch in file order, its values in base
// units (times in nanoseconds, bytes in bytes, rates per second; a
// percentage as printed), absent (NaN) where the profiler printed "n/a",
// nothing, or text. A malformed file is an error naming the file, line
// and column. A Mapping picks, per statistic, the first of its pairs that
// the profile can evaluate, and evaluates it per launch.
//
// It reads text only: which trace a profile belongs to, matching launches
// to traced kernels, and storing what was read are its callers'.
package hwprofile
