// Package testkit holds what Cascade's tests share that needs no server:
// waiting on a condition without sleeping blindly, building the module's
// programs (the stand-in simulator and post-processor) once per test
// binary, small disks, metric scrapes and CPU probes for benchmarks.
//
// Its subpackages are the heavier harnesses, each imported only by the
// tests that need it: dbtest (fresh databases on SQLite and PostgreSQL),
// servertest (a real server on a free port, its websocket clients),
// slurmtest (a one-node Slurm cluster), and the stand-ins fakesim (a
// simulator speaking Accel-Sim's command line and log) and fakepp (a
// post-processor). Nothing outside tests and benchmarks imports them.
package testkit
