// The kernels table's Run row: the run's totals of the kernels' own columns, from its statistics'
// totals (the sum of the kernels' cycles and instructions), its core clock and its comparison.
import { statOf, type StatCounter, type StatValues } from "./stats";

export interface RunRow {
  cycles: number | null;
  instructions: number | null;
  ipc: number | null;
  simNs: number | null;
  /** Of the kernels compared with real timing. */
  measuredNs: number | null;
  errorPct: number | null;
}

export function runRow(
  counters: readonly StatCounter[],
  totals: StatValues | null | undefined,
  coreClockMHz: number | null | undefined,
  comparison: { simTotalNs: number; measuredTotalNs: number } | null | undefined,
): RunRow {
  const cycles = statOf(counters, totals, "cycles");
  const instructions = statOf(counters, totals, "instructions");
  const ipc = cycles && instructions != null ? instructions / cycles : null;
  const simNs = cycles != null && coreClockMHz ? (cycles * 1000) / coreClockMHz : null;
  const measuredNs = comparison?.measuredTotalNs ?? null;
  const errorPct = comparison && comparison.measuredTotalNs > 0 ? (100 * (comparison.simTotalNs - comparison.measuredTotalNs)) / comparison.measuredTotalNs : null;
  return { cycles, instructions, ipc, simNs, measuredNs, errorPct };
}
