import { formatPct } from "../runs/compare";

/** The correlator's figures of one statistic, as the API gives them. */
export interface Figures {
  pearson?: number | null;
  mapePct?: number | null;
  nrmse?: number | null;
}

/** Pearson's r to three places; "—" when it is undefined (fewer than two kernels, or a side constant). */
export function formatPearson(r: number | null | undefined): string {
  return r == null || !Number.isFinite(r) ? "—" : r.toFixed(3);
}

/** NRMSE to three places. */
export function formatNrmse(v: number | null | undefined): string {
  return v == null || !Number.isFinite(v) ? "—" : v.toFixed(3);
}

/** The figure configs are ranked by on a statistic (StatCorrelation's rankedBy: MAPE or NRMSE). */
export function rankedFigure(s: Figures | null | undefined, rankedBy: string): number | null {
  if (!s) return null;
  return (rankedBy === "MAPE" ? s.mapePct : s.nrmse) ?? null;
}

/** That figure as the table shows it. */
export function formatRanked(s: Figures | null | undefined, rankedBy: string): string {
  const v = rankedFigure(s, rankedBy);
  return rankedBy === "MAPE" ? formatPct(v, false) : formatNrmse(v);
}

/** Where a run is: what to say for a statistic none of whose kernels has a pair yet. */
export function noPairsYet(active: boolean): string {
  return active
    ? "No kernel simulated so far was measured by the trace's profiles yet: the figures appear as kernels finish."
    : "No statistic of this run was measured by the trace's profiles (none of its kernels has a counter the run gives).";
}
