// Package simlog reads what Accel-Sim's accel-sim.out prints (formats.md §6)
// as it prints it: per-kernel results, progress, and the outcome of the run,
// with the simulator's decisive error line when it failed.
package simlog
