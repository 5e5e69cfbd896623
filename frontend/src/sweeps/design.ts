/**
 * The design space of a sweep as the page draws it: the speedups against the baseline the user
 * picks (the server's figures, worked out again for another baseline as the server would), and
 * the chart's lines: each swept parameter against simulated time, one line per combination of
 * the others.
 */

export interface DesignAxis {
  option?: string | null;
  values: readonly string[];
}

export interface DesignCell {
  simConfig: string;
  base: string;
  values: readonly string[];
  shipped: boolean;
  runs: number;
  succeeded: number;
  cycles?: number | null;
  timeNs?: number | null;
  sampled: number;
  timeLowNs?: number | null;
  timeHighNs?: number | null;
}

export interface Speedup {
  speedup: number | null;
  low: number | null;
  high: number | null;
}

/** An axis's name: its option, or "modifier" for an axis of modifiers. */
export function axisName(a: DesignAxis): string {
  return a.option || "modifier";
}

/** A value as the table shows it: a modifier axis's "" is "none". */
export function valueText(a: DesignAxis, v: string): string {
  return !a.option && v === "" ? "none" : v;
}

/** a / b, null when either is missing or b is not positive. */
function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  return a == null || b == null || !(b > 0) ? null : a / b;
}

/**
 * Each cell's speedup against cells[b]: the baseline's time over the cell's; with an interval
 * on either side (a sampled cell's), its bounds from both intervals (Sweep.designSpace's).
 */
export function speedups(cells: readonly DesignCell[], b: number): Speedup[] {
  const base = cells[b];
  return cells.map((c) => {
    const s: Speedup = { speedup: ratio(base?.timeNs, c.timeNs), low: null, high: null };
    if (base && (c.timeLowNs != null || base.timeLowNs != null)) {
      s.low = ratio(base.timeLowNs ?? base.timeNs, c.timeHighNs ?? c.timeNs);
      s.high = ratio(base.timeHighNs ?? base.timeNs, c.timeLowNs ?? c.timeNs);
    }
    return s;
  });
}

/** Each time's speedup against times[b] (a kernel name's or a step's, by cell). */
export function rowSpeedups(times: readonly (number | null | undefined)[], b: number): (number | null)[] {
  return times.map((t) => ratio(times[b], t));
}

/** 1.234 → "1.23×"; "—" for none. */
export function formatSpeedup(s: number | null | undefined): string {
  if (s == null || !Number.isFinite(s)) return "—";
  return `${s.toFixed(s >= 100 ? 0 : s >= 10 ? 1 : 2)}×`;
}

export interface Point {
  x: number;
  /** The value as given, for the axis's ticks and the tooltip. */
  label: string;
  cell: number;
  timeNs: number;
  lowNs: number | null;
  highNs: number | null;
}

export interface Line {
  /** The other axes' values (and the base config when the sweep has several): "" for the only line. */
  name: string;
  points: Point[];
}

export interface AxisChart {
  axis: string;
  /** Whether x is the values as numbers; otherwise each value's place on the axis. */
  numeric: boolean;
  ticks: { x: number; label: string }[];
  lines: Line[];
}

/**
 * The chart of axis j: x its values (as numbers when every value is one, else their places),
 * y each cell's simulated time, one line per combination of the other axes' values and of the
 * base config, cells without a time left out (a line keeps its other points).
 */
export function axisChart(axes: readonly DesignAxis[], cells: readonly DesignCell[], j: number): AxisChart {
  const axis = axes[j];
  const numeric = axis.values.length > 0 && axis.values.every((v) => v.trim() !== "" && Number.isFinite(Number(v)));
  const xOf = (v: string) => (numeric ? Number(v) : axis.values.indexOf(v));
  const bases = new Set(cells.map((c) => c.base));
  const lines = new Map<string, Line>();
  cells.forEach((c, i) => {
    const others = axes.flatMap((a, k) => (k === j ? [] : [`${axisName(a)} ${valueText(a, c.values[k] ?? "")}`]));
    if (bases.size > 1) others.unshift(c.base);
    const name = others.join(", ");
    let line = lines.get(name);
    if (!line) lines.set(name, (line = { name, points: [] }));
    if (c.timeNs == null) return;
    const v = c.values[j] ?? "";
    line.points.push({ x: xOf(v), label: valueText(axis, v), cell: i, timeNs: c.timeNs, lowNs: c.timeLowNs ?? null, highNs: c.timeHighNs ?? null });
  });
  for (const l of lines.values()) l.points.sort((a, b) => a.x - b.x);
  return {
    axis: axisName(axis),
    numeric,
    ticks: axis.values.map((v) => ({ x: xOf(v), label: valueText(axis, v) })),
    lines: [...lines.values()],
  };
}

/** How many cells a grid has: base configs × each axis's values. */
export function gridSize(bases: number, axes: readonly { values: readonly unknown[] }[]): number {
  return axes.reduce((n, a) => n * a.values.length, bases);
}

/** "20, 40, 80" → ["20", "40", "80"]: values given by comma, trimmed; an empty list for none. */
export function parseValues(text: string): string[] {
  if (text.trim() === "") return [];
  return text.split(",").map((v) => v.trim());
}
