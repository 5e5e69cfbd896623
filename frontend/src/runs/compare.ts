import type { RunState } from "../gql/graphql";
import { compareTime } from "../time";

export interface MeasuredKernel {
  kernelId: number;
  /** The mangled name. */
  name: string;
  /** The name to show (demangled, without parameters), as the tables show it. */
  displayName?: string;
  simTimeNs?: number | null;
  measuredNs?: number | null;
  errorPct?: number | null;
}

export interface ScatterPoints {
  /** Measured ns, ascending (uPlot wants x sorted). */
  x: number[];
  /** Simulated ns for each x. */
  y: number[];
  /** The kernel behind each point. */
  kernels: MeasuredKernel[];
  /** The range both axes share, for the y = x line. */
  min: number;
  max: number;
}

/** Kernels with both times, as log–log scatter points; times ≤ 0 cannot be on a log axis. */
export function scatterPoints(kernels: readonly MeasuredKernel[]): ScatterPoints {
  const usable = kernels
    .filter((k) => (k.measuredNs ?? 0) > 0 && (k.simTimeNs ?? 0) > 0)
    .sort((a, b) => a.measuredNs! - b.measuredNs! || a.kernelId - b.kernelId);
  const x = usable.map((k) => k.measuredNs!);
  const y = usable.map((k) => k.simTimeNs!);
  const all = x.concat(y);
  return {
    x,
    y,
    kernels: usable,
    min: all.length ? Math.min(...all) : 1,
    max: all.length ? Math.max(...all) : 10,
  };
}

/** "+12.3 %" / "−4.0 %"; signed, since over- and under-estimates differ. */
export function formatPct(p: number | null | undefined, signed = true): string {
  if (p == null || !Number.isFinite(p)) return "—";
  const s = Math.abs(p).toFixed(Math.abs(p) >= 100 ? 0 : 1);
  if (!signed) return `${s} %`;
  return `${p > 0 ? "+" : p < 0 ? "−" : ""}${s} %`;
}

export function formatCorrelation(r: number | null | undefined): string {
  return r == null || !Number.isFinite(r) ? "— (needs 2 kernels)" : r.toFixed(3);
}

/** 0..1, or null when the total is not known yet. */
export function progressFraction(p: { kernelsDone: number; kernelsTotal: number }): number | null {
  if (p.kernelsTotal <= 0) return null;
  return Math.min(1, Math.max(0, p.kernelsDone / p.kernelsTotal));
}

export const ACTIVE_RUN_STATES: readonly RunState[] = ["QUEUED", "RUNNING"];
export function isActive(state: string): boolean {
  return (ACTIVE_RUN_STATES as readonly string[]).includes(state);
}

/**
 * "1-10, 15 20" → [1..10, 15, 20]: the optional kernel subset of New run, sorted and without
 * repeats. Returns an error for anything else; an empty text means every kernel (null).
 */
export function parseKernelIds(text: string): { ids: number[] | null; error: string | null } {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  if (parts.length === 0) return { ids: null, error: null };
  const ids = new Set<number>();
  for (const p of parts) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(p);
    if (!m) return { ids: null, error: `“${p}” is not a kernel id or a range like 1-10` };
    const a = Number(m[1]);
    const b = m[2] != null ? Number(m[2]) : a;
    if (b < a) return { ids: null, error: `“${p}” runs backwards` };
    if (b - a > 1_000_000) return { ids: null, error: `“${p}” is too large a range` };
    for (let i = a; i <= b; i++) ids.add(i);
  }
  return { ids: [...ids].sort((x, y) => x - y), error: null };
}

/** What a list of runs knows of each: a failure class only where it is filtered by one. */
export interface ListedRun {
  id: string;
  state: string;
  createdAt: string;
  updatedAt: string;
  failureClass?: string | null;
  /** The sampled or split run this run is a segment of: segments are listed by that run alone. */
  sampledBy?: { id: string } | null;
}

/**
 * Runs newest first; a runUpdated event replaces its row or joins the list at its place. A copy
 * older than the row shown (by updatedAt) changes nothing: see useReplayReducer.
 */
export function mergeRun<R extends ListedRun>(
  rows: readonly R[],
  run: R,
  stateFilter: string | null,
  classFilter: string | null = null,
): R[] {
  const i = rows.findIndex((r) => r.id === run.id);
  const keep = (!stateFilter || run.state === stateFilter) && (!classFilter || run.failureClass === classFilter);
  if (i >= 0) {
    if (compareTime(rows[i].updatedAt, run.updatedAt) > 0) return rows as R[];
    const next = rows.slice();
    if (keep) next[i] = run;
    else next.splice(i, 1);
    return next;
  }
  if (!keep) return rows as R[];
  const next = rows.slice();
  let at = next.findIndex((r) => compareTime(run.createdAt, r.createdAt) > 0);
  if (at < 0) at = next.length;
  next.splice(at, 0, run);
  return next;
}

export type RunListAction<R> =
  | { type: "loaded"; rows: R[] }
  | { type: "updated"; run: R; limit?: number }
  | { type: "removed"; id: string };

/**
 * A list of runs from a query's answers (loaded) and live events. An updated run that is not
 * listed joins only while the list holds fewer than limit rows (a page, when given).
 */
export function runListReducer<R extends ListedRun>(
  rows: R[],
  a: RunListAction<R>,
  stateFilter: string | null,
  classFilter: string | null = null,
): R[] {
  switch (a.type) {
    case "loaded":
      return a.rows;
    case "updated":
      // runUpdated sends a segment's events too, but runs lists leave segments out, as the
      // server's runs query does: its sampled or split run shows them.
      if (a.run.sampledBy) return rows;
      if (a.limit !== undefined && rows.length >= a.limit && !rows.some((r) => r.id === a.run.id)) return rows;
      return mergeRun(rows, a.run, stateFilter, classFilter);
    case "removed":
      return rows.some((r) => r.id === a.id) ? rows.filter((r) => r.id !== a.id) : rows;
  }
}
