// Package accelsimtest lays out a stand-in Accel-Sim checkout for tests of
// CASCADE_ACCELSIM_DIR: the stand-in simulator as
// gpu-simulator/bin/release/accel-sim.out, the sample tested configs split
// the way a checkout keeps them, GPGPU-Sim's library directory, and a trace
// reader source that says which trace format the simulator reads.
package accelsimtest
