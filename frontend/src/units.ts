// What the instruction counts count: a trace's are warp instructions, a run's thread
// instructions (see Kernel.instructions and RunKernel.simInstructions in the schema). The
// columns say which; these are their tooltips.

export const WARP_INSTRUCTIONS =
  "Warp instructions the tracer counted (total_insts): one for each instruction a warp executed, however many of its threads were active";

export const THREAD_INSTRUCTIONS =
  "Thread instructions the simulator executed (gpu_sim_insn): each warp instruction counts once for every active thread, up to 32 times the warp count";
