// Pure helpers of the sampling pages: figures as words, the planning form's input, and the
// strata chart's scale.
import { formatCount, formatNs } from "../format";
import type { SamplingAllocation, SamplingBasis } from "../gql/graphql";

/** A fraction (0.0123) as a percentage with the digits a small one needs: "1.23 %", "0.042 %", "100 %". */
export function formatFraction(f: number | null | undefined): string {
  if (f == null || !Number.isFinite(f)) return "—";
  const p = f * 100;
  const a = Math.abs(p);
  if (a === 0) return "0 %";
  if (a >= 100) return `${p.toFixed(0)} %`;
  if (a >= 10) return `${p.toFixed(1)} %`;
  if (a >= 0.1) return `${p.toFixed(2)} %`;
  // Two significant digits below 0.1 %.
  const digits = Math.min(8, 1 - Math.floor(Math.log10(a)));
  return `${p.toFixed(digits)} %`;
}

/** A relative error bound (0.01) as "±1 %". */
export function formatBound(e: number | null | undefined): string {
  if (e == null || !Number.isFinite(e)) return "—";
  return `±${formatFraction(e)}`;
}

/** A large count compactly, three significant digits: 1234 → "1.23 k", 5.6e9 → "5.60 G"; exact below 10,000. */
export function formatCompact(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n)) return "—";
  const a = Math.abs(n);
  if (a < 1e4) return formatCount(Math.round(n));
  const units: [number, string][] = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  const [div, u] = units.find(([d]) => a >= d)!;
  const v = n / div;
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${u}`;
}

/** A value of a plan's basis: a measured time, or warp instructions. */
export function formatBasis(v: number | null | undefined, basis: SamplingBasis): string {
  if (v == null || !Number.isFinite(v)) return "—";
  return basis === "DURATION" ? formatNs(v) : `${formatCompact(v)} warp instr.`;
}

/** How many times less the sampled run spends than the full run would: "×12.5"; null when either is not known. */
export function speedup(fullSeconds: number | null | undefined, spentSeconds: number | null | undefined): number | null {
  if (fullSeconds == null || spentSeconds == null || !(spentSeconds > 0) || !(fullSeconds > 0)) return null;
  return fullSeconds / spentSeconds;
}

export function formatSpeedup(x: number | null): string {
  if (x == null || !Number.isFinite(x)) return "—";
  return `×${x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)}`;
}

/** Seconds as "850 ms", "12.3 s", "4 min 05 s", "2 h 07 min". */
export function formatSeconds(s: number | null | undefined): string {
  if (s == null || !Number.isFinite(s) || s < 0) return "—";
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${String(m % 60).padStart(2, "0")} min`;
}

export type TargetKind = "error" | "instructions";
export interface TargetInput {
  error?: number;
  instructions?: number;
}

/**
 * The planning form's target: an error bound typed in percent ("1", "0.5 %") or a budget of
 * warp instructions ("2,000,000", "2e6"); an empty field asks for the server's default.
 */
export function parseTarget(kind: TargetKind, text: string): { target: TargetInput | null; error: string | null } {
  const t = text.trim().replace(/%$/, "").replace(/[,_\s]/g, "");
  if (t === "") return { target: null, error: null };
  const v = Number(t);
  if (!Number.isFinite(v)) return { target: null, error: `not a number: ${text.trim()}` };
  if (kind === "error") {
    if (!(v > 0 && v < 100)) return { target: null, error: "an error bound is above 0 % and below 100 %" };
    return { target: { error: v / 100 }, error: null };
  }
  if (!Number.isInteger(v) || v <= 0) return { target: null, error: "a budget is a whole number of warp instructions above 0" };
  return { target: { instructions: v }, error: null };
}

export type PlanField = "method" | "target" | "warmup";

/**
 * Which form field a server error is about: the planner starts its messages with the argument
 * they are about ("target: error must be > 0 …"). Others (the trace is not ready) are the form's.
 */
export function errorField(message: string): { field: PlanField | null; text: string } {
  const m = /^(method|target|warmup): (.*)$/s.exec(message.trim());
  if (!m) return { field: null, text: message };
  return { field: m[1] as PlanField, text: m[2] };
}

/** An axis of the strata chart: linear, or log when the values span more than a ratio of 20. */
export interface Scale {
  log: boolean;
  lo: number;
  hi: number;
  /** A value's position, 0 (lo) to 1 (hi), clamped. */
  at(v: number): number;
  ticks: number[];
}

export const LOG_RATIO = 20;

export function chartScale(values: readonly number[]): Scale {
  const vs = values.filter((v) => Number.isFinite(v));
  let lo = vs.length ? Math.min(...vs) : 0;
  let hi = vs.length ? Math.max(...vs) : 1;
  const log = lo > 0 && hi / lo > LOG_RATIO;
  if (log) {
    lo = 10 ** Math.floor(Math.log10(lo));
    hi = 10 ** Math.ceil(Math.log10(hi));
    const ticks: number[] = [];
    for (let e = Math.log10(lo); e <= Math.log10(hi) + 1e-9; e++) ticks.push(10 ** e);
    const l0 = Math.log10(lo);
    const span = Math.log10(hi) - l0;
    return { log, lo, hi, ticks, at: (v) => clamp01(v > 0 ? (Math.log10(v) - l0) / span : 0) };
  }
  lo = Math.min(0, lo);
  if (hi <= lo) hi = lo + 1;
  const step = niceStep((hi - lo) / 5);
  hi = Math.ceil(hi / step) * step;
  const ticks: number[] = [];
  for (let v = lo; v <= hi + step / 1e6; v += step) ticks.push(v);
  return { log, lo, hi, ticks, at: (v) => clamp01((v - lo) / (hi - lo)) };
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}

/** 1, 2 or 5 times a power of ten, at least x. */
export function niceStep(x: number): number {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  const f = x / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/** A stratum's extent on the chart: mean ± one standard deviation, its low end kept above 0 (a log axis has no 0). */
export function extent(mean: number, cv: number | null | undefined): [number, number] {
  const sd = Math.abs(mean * (cv ?? 0));
  const low = mean - sd;
  return [low > 0 ? low : Math.min(mean, mean / 10), mean + sd];
}

/** A plan's warm-up as the list shows it: a step of the program (and its length) or N launches. */
export function warmupText(p: { warmup: number; warmupStep: boolean }): string {
  if (p.warmupStep) return `a step (${formatCount(p.warmup)} launches)`;
  return p.warmup === 1 ? "1 launch" : `${formatCount(p.warmup)} launches`;
}

/** Why a stratum has its representatives: a short label, and the enum's meaning for a tooltip. */
export const ALLOCATION: Record<SamplingAllocation, { label: string; meaning: string }> = {
  NEYMAN: { label: "Neyman", meaning: "Its share of the least-cost allocation that meets the bound on the total, rounded up." },
  LEAST: { label: "least (1)", meaning: "One, the least a stratum takes: the allocation asked for less." },
  SPREAD: { label: "+1 for spread", meaning: "One more than the allocation asked for, so that a sampled run measures the simulator's own spread." },
  ALL: { label: "all", meaning: "Every launch: the allocation asked for as many." },
  UNTIMED: { label: "untimed (1)", meaning: "One: launches without a measured duration (STEM), left out of the total." },
  SIEVE: { label: "Sieve (1)", meaning: "Sieve's one a stratum, the strata split until the bound is met." },
};

/** A stratum's why as its label and tooltip; an enum value this build does not know is shown as it is. */
export function allocationText(why: string, allocation: number): { label: string; title: string } {
  const a = ALLOCATION[why as SamplingAllocation];
  if (!a) return { label: why, title: why };
  const before = why === "NEYMAN" || why === "LEAST" || why === "SPREAD" || why === "ALL" ? ` (allocation before rounding: ${allocation.toFixed(2)})` : "";
  return { label: a.label, title: a.meaning + before };
}

/** Warp instructions a stratum adds: "12.3 k warp instr.", "0" for none. */
export function formatCost(insts: number | null | undefined): string {
  if (insts == null || !Number.isFinite(insts)) return "—";
  return insts === 0 ? "0" : `${formatCompact(insts)} warp instr.`;
}

/** A rate of warp instructions a second: "1.23 M warp instr./s". */
export function formatRate(perSecond: number | null | undefined): string {
  if (perSecond == null || !Number.isFinite(perSecond) || perSecond <= 0) return "—";
  return `${formatCompact(perSecond)} warp instr./s`;
}

/** A signed relative error: "+1.23 %", "−0.042 %". */
export function formatSignedFraction(f: number | null | undefined): string {
  if (f == null || !Number.isFinite(f)) return "—";
  if (f === 0) return "0 %";
  return `${f > 0 ? "+" : "−"}${formatFraction(Math.abs(f))}`;
}
