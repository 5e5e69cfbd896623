// A run's simulator statistics: the counters the API lists (Run.statCounters), each kernel's
// values aligned with them (RunKernel.statValues), the columns the user picked, and the stall
// breakdown of "where the cycles went".
import type { FailureClass, StatKind } from "../gql/graphql";
import { formatCount } from "../format";

export interface StatCounter {
  name: string;
  kind: StatKind;
  unit: string;
}

export type StatValues = readonly (number | null)[];

/** Where the picked statistics columns are remembered. */
export const COLUMNS_KEY = "cascade.runKernelColumns";

/** Shown until the user picks: the hit rates, which say most at a glance. */
export const DEFAULT_COLUMNS = ["l2_read_hit_rate", "l1d_read_hit_rate"];

/** The picked column names, from storage; the defaults when none were ever picked. */
export function loadColumns(storage: Pick<Storage, "getItem"> | null = safeStorage()): string[] {
  try {
    const raw = storage?.getItem(COLUMNS_KEY);
    if (raw == null) return DEFAULT_COLUMNS;
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : DEFAULT_COLUMNS;
  } catch {
    return DEFAULT_COLUMNS;
  }
}

export function saveColumns(names: readonly string[], storage: Pick<Storage, "setItem"> | null = safeStorage()): void {
  try {
    storage?.setItem(COLUMNS_KEY, JSON.stringify(names));
  } catch {
    /* private mode or full: the choice lasts this page only */
  }
}

function safeStorage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null;
  }
}

/** The picked counters this run has, in the run's order, with their index in statValues. */
export function pickedColumns(counters: readonly StatCounter[], picked: readonly string[]): { counter: StatCounter; index: number }[] {
  const want = new Set(picked);
  return counters.flatMap((counter, index) => (want.has(counter.name) ? [{ counter, index }] : []));
}

export const KIND_LABELS: Record<StatKind, string> = {
  AGGREGATE: "Counted per kernel",
  KERNEL: "The simulator's per-kernel figures",
  RATE: "Simulation so far",
  DERIVED: "Hit rates and ratios",
};

/** A statistic's value in its unit: fractions and % as percentages, counts whole. */
export function formatStat(v: number | null | undefined, unit: string): string {
  if (v == null || !Number.isFinite(v)) return "—";
  if (unit === "fraction") return `${(100 * v).toFixed(1)} %`;
  if (unit === "%") return `${v.toFixed(1)} %`;
  if (Number.isInteger(v)) return formatCount(v);
  const a = Math.abs(v);
  return a >= 1000 ? formatCount(Math.round(v)) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

/** The unit as a column header shows it; fractions are shown as percentages. */
export function headerUnit(unit: string): string {
  return unit === "fraction" ? "%" : unit;
}

/** The value of the named counter, null when the run has no such counter or no value. */
export function statOf(counters: readonly StatCounter[], values: StatValues | null | undefined, name: string): number | null {
  const i = counters.findIndex((c) => c.name === name);
  return i < 0 || !values ? null : (values[i] ?? null);
}

/**
 * The two breakdowns of "where the cycles went". The stalls are the memory stage's only:
 * GPGPU-Sim counts stall_shared_mem (gpgpu_n_stall_shd_mem) once per SM and cycle its
 * load/store stage cannot take its instruction, and at the same time one of its parts, by cause
 * (gpgpu_stall_shd_mem[...]): the parts add up to it, so it is the bar, not a segment beside them.
 * stall_dram_full and stall_icnt_to_shader are counted per memory partition, in the L2 and
 * interconnect clocks: they add up with nothing here.
 */
export const BREAKDOWNS = {
  stalls: { label: "Memory-stage stalls", prefix: "stall_", unit: "SM-cycles" },
  warps: { label: "Warp states", prefix: "warp_state_", unit: "warp cycles" },
} as const;

/** The memory stage's stalls, summed over the SMs, and its parts by cause. */
export const STALL_TOTAL = "stall_shared_mem";
export const STALL_PARTS = ["stall_gmem_resource", "stall_gmem_coalescing", "stall_gmem_data_port", "stall_smem_bank_conflict", "stall_cmem_resource"];
/** The part of STALL_TOTAL none of STALL_PARTS has (causes the simulator does not print). */
export const STALL_OTHER = "stall_other";
export type Breakdown = keyof typeof BREAKDOWNS;

export interface BarRow {
  label: string;
  values: number[]; // one per series, absent as 0
  total: number;
}

/**
 * The stacked bars of a breakdown: its series (the run's counters of that prefix), a bar for
 * the run (the kernels' sum: these counters are all aggregate) and one for each of the first
 * maxKernels kernels.
 */
export function breakdownBars(
  counters: readonly StatCounter[],
  kernels: readonly { label: string; statValues: StatValues }[],
  which: Breakdown,
  maxKernels = 40,
  /** The run's totals (statTotals): its bar when given, else the sum of kernels'. */
  runTotals?: StatValues | null,
): { series: { name: string; index: number }[]; rows: BarRow[] } {
  if (which === "stalls") return stallBars(counters, kernels, maxKernels, runTotals);
  const prefix = BREAKDOWNS[which].prefix;
  const series = counters.flatMap((c, index) => (c.name.startsWith(prefix) && c.kind === "AGGREGATE" ? [{ name: c.name, index }] : []));
  const bar = (label: string, vs: StatValues): BarRow => {
    const values = series.map((s) => Math.max(0, vs[s.index] ?? 0));
    return { label, values, total: values.reduce((a, b) => a + b, 0) };
  };
  const run = series.map(() => 0);
  for (const k of kernels) series.forEach((s, i) => (run[i] += Math.max(0, k.statValues[s.index] ?? 0)));
  const rows = [runTotals ? bar("Run", runTotals) : { label: "Run", values: run, total: run.reduce((a, b) => a + b, 0) }];
  for (const k of kernels.slice(0, maxKernels)) rows.push(bar(k.label, k.statValues));
  return { series, rows };
}

/**
 * The memory stage's stall bars: a segment per part (STALL_PARTS the run has), and STALL_OTHER
 * for what of STALL_TOTAL they leave (when any row has some); each bar's total is STALL_TOTAL
 * (the parts' sum without it).
 */
function stallBars(
  counters: readonly StatCounter[],
  kernels: readonly { label: string; statValues: StatValues }[],
  maxKernels: number,
  runTotals?: StatValues | null,
): { series: { name: string; index: number }[]; rows: BarRow[] } {
  const at = (name: string) => counters.findIndex((c) => c.name === name && c.kind === "AGGREGATE");
  const parts = STALL_PARTS.map((name) => ({ name, index: at(name) })).filter((s) => s.index >= 0);
  const whole = at(STALL_TOTAL);
  if (parts.length === 0 && whole < 0) return { series: [], rows: [] };
  const bar = (label: string, vs: StatValues): BarRow => {
    const values = parts.map((s) => Math.max(0, vs[s.index] ?? 0));
    const sum = values.reduce((a, b) => a + b, 0);
    const total = whole >= 0 && vs[whole] != null ? Math.max(sum, vs[whole] ?? 0) : sum;
    return { label, values: [...values, total - sum], total };
  };
  const kernelRows = kernels.map((k) => bar(k.label, k.statValues));
  let run: BarRow;
  if (runTotals) run = bar("Run", runTotals);
  else {
    const values = parts.map(() => 0).concat(0);
    for (const r of kernelRows) r.values.forEach((v, i) => (values[i] += v));
    run = { label: "Run", values, total: values.reduce((a, b) => a + b, 0) };
  }
  const rows = [run, ...kernelRows.slice(0, maxKernels)];
  const series = [...parts, { name: STALL_OTHER, index: -1 }];
  if (rows.every((r) => r.values[r.values.length - 1] === 0)) {
    series.pop();
    for (const r of rows) r.values.pop();
  }
  return { series, rows };
}

/** How each failure class reads. */
export const FAILURE_CLASSES: Record<FailureClass, string> = {
  DEADLOCK: "Deadlock",
  OUT_OF_MEMORY: "Out of memory",
  SEGFAULT: "Segmentation fault",
  ASSERTION: "Assertion failed",
  TIME_LIMIT: "Time limit",
  CYCLE_LIMIT: "Cycle limit",
  UNSUPPORTED_BINARY_VERSION: "Unsupported binary version",
  UNSUPPORTED_TRACE_TYPE: "Unsupported trace type",
  BAD_CONFIG_OPTION: "Bad config option",
  MISSING_TRACE_FILE: "Missing trace file",
  CANCELLED: "Cancelled",
  OTHER: "Other",
};

/** A content sum as shown: its first 12 hex digits (the whole one in a tooltip). */
export function shortSum(sum: string | null | undefined): string {
  return sum ? sum.slice(0, 12) : "—";
}
