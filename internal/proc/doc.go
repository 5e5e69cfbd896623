// Package proc starts the child processes Cascade supervises, the
// post-processors (postproc) and the simulators of local runs (runs): each
// runs in its own process group, dies with the server (Linux's
// parent-death signal), writes its output to a log file while nudging the
// caller, and is stopped as a group — SIGTERM, then SIGKILL after a grace
// period. It also reads the end of such a log ([LastLines]). Short helper
// commands are not its: package slurm runs Slurm's commands, and
// posttraces and tracegen run xz, with os/exec directly.
package proc
