// The pure logic of a statistic's scatter (simulated against measured, as Accel-Sim's
// correlator draws it): which axes, which points, which point the pointer is on, and how the
// numbers read.

/** How both axes map values: log where positive values span decades, asinh (log-like, through 0) where some are ≤ 0. */
export type AxisKind = "linear" | "log" | "asinh";

export interface Axis {
  kind: AxisKind;
  /** The range both axes share, so that y = x is the diagonal. */
  min: number;
  max: number;
  /** asinh only: below this magnitude the axis is linear (the least nonzero magnitude). */
  threshold: number;
}

/** Values spanning more than this ratio (two decades) go on log axes. */
export const LOG_SPAN = 100;

/**
 * The axes for a scatter of these values (both sides' values together): log when every
 * value is positive and they span more than two decades; asinh when they span as much but
 * some are zero or negative (a log axis cannot show them, so the axis turns linear near 0);
 * linear otherwise.
 */
export function chooseAxis(values: readonly number[]): Axis {
  const vs = values.filter(Number.isFinite);
  if (vs.length === 0) return { kind: "linear", min: 0, max: 1, threshold: 1 };
  const min = Math.min(...vs);
  const max = Math.max(...vs);
  const mags = vs.map(Math.abs).filter((v) => v > 0);
  const lo = mags.length ? Math.min(...mags) : 0;
  const hi = mags.length ? Math.max(...mags) : 0;
  if (lo > 0 && hi / lo > LOG_SPAN) {
    if (min > 0) {
      return { kind: "log", min: 10 ** Math.floor(Math.log10(min / 1.2)), max: 10 ** Math.ceil(Math.log10(max * 1.2)), threshold: lo };
    }
    return { kind: "asinh", min: min < 0 ? min * 1.5 : 0, max: max > 0 ? max * 1.5 : 0, threshold: lo };
  }
  const span = max - min || Math.abs(max) || 1;
  let a = min - span * 0.05;
  const b = max + span * 0.05;
  if (min >= 0 && a < 0) a = 0;
  return { kind: "linear", min: a, max: b, threshold: lo || 1 };
}

export interface ScatterPair {
  seq: number;
  simulated: number;
  measured: number;
  representative?: boolean | null;
}

export interface ScatterData<P extends ScatterPair> {
  axis: Axis;
  /** The pairs drawn, by measured value (uPlot wants x ascending), then launch order. */
  pairs: P[];
  /** uPlot's data: x (the axis' ends first and last, for the diagonal), then the series. */
  xs: number[];
  /** Simulated values of the launches simulated (every launch of a run that is not sampled). */
  simulated: (number | null)[];
  /** Simulated values of a sampled run's projected launches; all null on any other run. */
  projected: (number | null)[];
  /** y = x: at the axis' ends only (the line spans the gaps). */
  diagonal: (number | null)[];
  /** Whether the run is sampled: its representatives are drawn apart from its projections. */
  sampled: boolean;
  /** Pairs left out: values that are not finite. */
  omitted: number;
}

/** The scatter of pairs: simulated (y) against measured (x), on axes chooseAxis picks. */
export function scatterData<P extends ScatterPair>(input: readonly P[]): ScatterData<P> {
  const pairs = input
    .filter((p) => Number.isFinite(p.simulated) && Number.isFinite(p.measured))
    .sort((a, b) => a.measured - b.measured || a.seq - b.seq);
  const axis = chooseAxis(pairs.flatMap((p) => [p.simulated, p.measured]));
  const sampled = pairs.some((p) => p.representative != null);
  const ends = (v: number | null) => [v, ...pairs.map(() => null), v];
  const xs = [axis.min, ...pairs.map((p) => p.measured), axis.max];
  const simulated: (number | null)[] = [null, ...pairs.map((p) => (p.representative === false ? null : p.simulated)), null];
  const projected: (number | null)[] = [null, ...pairs.map((p) => (p.representative === false ? p.simulated : null)), null];
  const diagonal = ends(null);
  diagonal[0] = axis.min;
  diagonal[diagonal.length - 1] = axis.max;
  return { axis, pairs, xs, simulated, projected, diagonal, sampled, omitted: input.length - pairs.length };
}

/**
 * The index of the point nearest (cx, cy) within radius pixels, or null: pos gives a point's
 * pixel position.
 */
export function nearestPoint(n: number, pos: (i: number) => [number, number], cx: number, cy: number, radius = 12): number | null {
  let best: number | null = null;
  let bestD = radius * radius;
  for (let i = 0; i < n; i++) {
    const [x, y] = pos(i);
    const d = (x - cx) ** 2 + (y - cy) ** 2;
    if (d <= bestD) {
      best = i;
      bestD = d;
    }
  }
  return best;
}

/** A statistic's value as the tables show it: whole numbers with separators, others to 4 significant digits. */
export function formatValue(v: number | null | undefined): string {
  if (v == null || !Number.isFinite(v)) return "—";
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString("en-US");
  return String(Number(v.toPrecision(4)));
}

/** An axis tick: 1.2k, 3.4M, 0.01. */
export function formatTick(v: number | null | undefined): string {
  if (v == null || !Number.isFinite(v)) return "";
  const a = Math.abs(v);
  for (const [d, s] of [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]] as const) {
    if (a >= d) return `${Number((v / d).toPrecision(3))}${s}`;
  }
  return String(Number(v.toPrecision(3)));
}
