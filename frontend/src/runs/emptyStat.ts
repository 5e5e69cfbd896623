// Why a statistics column is empty. The real Accel-Sim prints "gpu_occupancy = -nan%" for every
// kernel, so occupancy stays empty however the run went: say so where the column is.

/** A note for a counter no kernel had a value of (total null) in a run with kernels; null otherwise. */
export function emptyStatNote(name: string, total: number | null | undefined, kernels: number): string | null {
  if (total != null || kernels === 0) return null;
  return name === "occupancy"
    ? "empty: the simulator prints -nan for it (gpu_occupancy = -nan%)"
    : "empty: the simulator printed no number for it";
}
