// Package runs simulates traces with Accel-Sim and turns what the simulator
// prints into results: it writes a run's kernel list, reads the simulator's
// log as it grows, compares simulated kernel times with measured ones, and
// projects the measured model steps onto the simulated times.
//
// The parsing and projection files (accellog.go, kernellist.go,
// comparison.go, steps.go) are pure: they read and write files they are
// given and never touch the database, events or the GraphQL layer.
package runs
