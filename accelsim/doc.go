// Package accelsim finds what Cascade needs in an Accel-Sim checkout
// (CASCADE_ACCELSIM_DIR): the simulator binary, the two halves of each
// tested config, the directory of GPGPU-Sim's libcudart.so, and the trace
// format the checkout's simulator reads, told from its trace reader's
// source or else its binary ([Find]). It only reads the checkout.
//
// Its subpackages are Accel-Sim's file formats, each read or written by
// one package, none of them running the simulator or touching the
// database:
//
//   - posttraces converts raw NVBit traces into the per-thread-block
//     traces and kernel lists the simulator reads (the built-in
//     post-processor's work; postproc runs it);
//   - tracez reads and writes Accel-Sim 2.0's binary .tracez traces;
//   - kernellist reads and writes processed kernel lists, kernelslist.g;
//   - simconfig reads tested-config directories and decides which suit a
//     trace;
//   - simlog reads what the simulator prints as it runs.
//
// accelsimtest, kernellisttest and simconfigtest write stand-ins of these
// for tests.
package accelsim
