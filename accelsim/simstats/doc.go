// Package simstats reads the statistics Accel-Sim prints after every
// kernel (formats.md §6) the way Accel-Sim's own scripts do
// (util/job_launching/get_stats.py with stats/example_stats.yml): a table
// of counters, each a name, a kind (aggregate, kernel or rate), a unit and
// a regular expression, declared in counters.txt; aggregate counters are
// diffed between consecutive kernels; -nan is absent, never zero.
//
// It owns the table, the per-kernel values, the derived hit rates (the one
// place they are computed), a run's summary, and the compact encoding a
// kernel's values are stored in. It reads text only: which run a kernel
// belongs to, and where values are stored, are its callers'.
package simstats
