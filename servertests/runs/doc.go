// Package runs holds the full tier's tests of runs, sweeps and sampled
// runs (packages runs and sampling/sampled) that start a real server
// (testkit/servertest) or a Slurm cluster (testkit/slurmtest): launched
// through the API, simulated by the stand-in simulator, followed to
// their end. go test -short skips them all.
//
// They live here, not beside the code they test, so that the fast tier
// links the whole server into as few test binaries as it can (see package
// servertests), and apart from servertests' because they run up to 4 at a
// time, share one Slurm cluster and are the longest: scripts/test.sh
// starts them first. Files named sampled_* test sampling/sampled, the
// others runs. The package itself is empty; its tests are runs_test.
package runs
