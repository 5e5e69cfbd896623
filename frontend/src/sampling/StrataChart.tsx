import { formatCount, formatDim3 } from "../format";
import type { SamplingBasis, SamplingPlanDetailFragment } from "../gql/graphql";
import { chartScale, extent, formatBasis } from "./figures";

type Stratum = SamplingPlanDetailFragment["strata"][number];

/** The most strata the chart draws: the largest ones. */
export const MAX_ROWS = 60;

const LABEL = 250;
const PLOT = 560;
const SIZE = 70;
const ROW = 20;
const TOP = 8;
const AXIS = 34;

/** A stratum's mean and spread on the plan's basis; null when it has no measured duration. */
export function stratumValue(s: Stratum, basis: SamplingBasis): { mean: number; cv: number } | null {
  if (basis === "DURATION") return s.meanDurationNs == null ? null : { mean: s.meanDurationNs, cv: s.cvDuration ?? 0 };
  return { mean: s.meanInstructions, cv: s.cvInstructions };
}

/** A representative's value on the basis. */
export function repValue(r: Stratum["representatives"][number], basis: SamplingBasis): number | null {
  return basis === "DURATION" ? (r.durationNs ?? null) : r.instructions;
}

/**
 * The strata along the basis's axis (measured duration, or warp instructions): each one's
 * extent (mean ± standard deviation) as a bar, its size as the circle at its mean, and its
 * representatives as triangles where they sit. Log scale when the values span a lot.
 */
export function StrataChart({ strata, basis }: { strata: readonly Stratum[]; basis: SamplingBasis }) {
  const placed = strata.map((s) => ({ s, v: stratumValue(s, basis) })).filter((x) => x.v != null) as { s: Stratum; v: { mean: number; cv: number } }[];
  const unplaced = strata.length - placed.length;
  const shown = [...placed].sort((a, b) => b.s.size - a.s.size).slice(0, MAX_ROWS).sort((a, b) => a.v.mean - b.v.mean);
  if (shown.length === 0) return <p className="muted">No stratum has a value to place on the chart.</p>;
  const values: number[] = [];
  for (const { s, v } of shown) {
    values.push(...extent(v.mean, v.cv));
    for (const r of s.representatives) {
      const rv = repValue(r, basis);
      if (rv != null && rv > 0) values.push(rv);
    }
  }
  const scale = chartScale(values);
  const maxSize = Math.max(...shown.map((x) => x.s.size));
  const height = TOP + shown.length * ROW + AXIS;
  const x = (v: number) => LABEL + scale.at(v) * PLOT;
  const axisName = basis === "DURATION" ? "measured duration" : "warp instructions";
  return (
    <figure
      className="chart strata-chart"
      data-testid="strata-chart"
      data-scale={scale.log ? "log" : "linear"}
      aria-label={`${shown.length} strata along ${axisName}, ${scale.log ? "log" : "linear"} scale`}
    >
      <svg width={LABEL + PLOT + SIZE} height={height} role="img" aria-hidden="false">
        {scale.ticks.map((t) => (
          <g key={t}>
            <line x1={x(t)} x2={x(t)} y1={TOP} y2={TOP + shown.length * ROW} className="grid" />
            <text x={x(t)} y={TOP + shown.length * ROW + 14} textAnchor="middle">
              {formatBasis(t, basis).replace(" warp instr.", "")}
            </text>
          </g>
        ))}
        <text x={LABEL + PLOT / 2} y={height - 4} textAnchor="middle" className="axis-name">
          {axisName}
          {scale.log ? " (log scale)" : ""}
        </text>
        <text x={LABEL + PLOT + 8} y={TOP + shown.length * ROW + 14} className="axis-name">
          launches
        </text>
        {shown.map(({ s, v }, i) => {
          const y = TOP + i * ROW + ROW / 2;
          const [lo, hi] = extent(v.mean, v.cv);
          const r = 2 + 6 * Math.sqrt(s.size / maxSize);
          const label = `${s.displayName}${s.grid ? ` ${formatDim3(s.grid)}` : ""}`;
          return (
            <g key={i} data-testid="stratum-row">
              <title>
                {`${s.displayName}: ${formatCount(s.size)} launches, mean ${formatBasis(v.mean, basis)}, CV ${v.cv.toFixed(2)}, ${s.representatives.length} representative(s)`}
              </title>
              <text x={LABEL - 8} y={y + 4} textAnchor="end" className="mono">
                {label.length > 34 ? `${label.slice(0, 33)}…` : label}
              </text>
              <line x1={x(lo)} x2={Math.max(x(hi), x(lo) + 1)} y1={y} y2={y} className="extent" />
              <circle cx={x(v.mean)} cy={y} r={r} className="size" />
              {s.representatives.map((rep) => {
                const rv = repValue(rep, basis);
                if (rv == null || rv <= 0) return null;
                const cx = x(rv);
                return (
                  <path key={rep.launch} d={`M${cx},${y - 3} l5,9 l-10,0 z`} className="rep" data-testid="rep-marker">
                    <title>{`launch ${rep.launch} (kernel ${rep.kernelId}): ${formatBasis(rv, basis)}, weight ${rep.weight.toFixed(1)}`}</title>
                  </path>
                );
              })}
              <text x={LABEL + PLOT + 8} y={y + 4}>
                {formatCount(s.size)}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption className="hint">
        Each row is a stratum: its bar spans mean ± one standard deviation, the circle's area is its number of launches (also at
        the right), and the triangles are its representatives.
        {placed.length > shown.length && ` The ${MAX_ROWS} largest of ${formatCount(placed.length)} strata are shown.`}
        {unplaced > 0 && ` ${formatCount(unplaced)} strata without a measured duration are not on the chart.`}
      </figcaption>
    </figure>
  );
}
