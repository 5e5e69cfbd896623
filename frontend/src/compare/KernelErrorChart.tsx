import { formatCount } from "../format";
import { bucketErrors, errorScale } from "./errorSeries";

const W = 720;
const H = 220;
const LEFT = 56;
const RIGHT = 12;
const TOP = 10;
const BOTTOM = 24;
/** Colours of the configs' series, in the order of the table's columns. */
const COLOURS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#a16207", "#db2777"];

/**
 * Each kernel's error under each config, along the kernels in launch order: a mark per kernel
 * (or per bucket of neighbouring kernels, from its lowest to its highest error, when there are
 * more kernels than pixels), a colour per config, and the zero line. Drawn from the kernels
 * loaded so far; the table below loads more as it scrolls.
 */
export function KernelErrorChart({
  rows,
  configs,
  total,
}: {
  rows: readonly { errors: readonly (number | null | undefined)[] }[];
  configs: readonly string[];
  total: number;
}) {
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const series = bucketErrors(rows, configs, plotW / 2);
  const scale = errorScale(series);
  const x = (i: number) => LEFT + (rows.length <= 1 ? plotW / 2 : (i / (rows.length - 1)) * plotW);
  const y = (e: number) => TOP + plotH / 2 - (Math.max(-scale, Math.min(scale, e)) / scale) * (plotH / 2);
  return (
    <figure className="kernel-error-chart">
      <svg role="img" aria-label="Error per kernel, per config" data-testid="kernel-error-chart" width={W} height={H} className="mape-chart">
        <line x1={LEFT} x2={W - RIGHT} y1={y(0)} y2={y(0)} stroke="currentColor" strokeOpacity={0.5} />
        {[scale, scale / 2, -scale / 2, -scale].map((t) => (
          <g key={t}>
            <line x1={LEFT} x2={W - RIGHT} y1={y(t)} y2={y(t)} stroke="currentColor" strokeOpacity={0.12} />
            <text x={LEFT - 6} y={y(t) + 4} textAnchor="end" fontSize="11">{`${t > 0 ? "+" : ""}${t} %`}</text>
          </g>
        ))}
        <text x={LEFT - 6} y={y(0) + 4} textAnchor="end" fontSize="11">0 %</text>
        {series.map((s, c) => (
          <g key={s.config} data-config={s.config} stroke={COLOURS[c % COLOURS.length]} fill={COLOURS[c % COLOURS.length]}>
            {s.buckets.map((b) =>
              b.min === b.max ? (
                <circle key={b.first} data-kernels={b.n} cx={x(b.first)} cy={y(b.min)} r={2.5} strokeWidth={0} fillOpacity={0.75} />
              ) : (
                <line
                  key={b.first}
                  data-kernels={b.n}
                  x1={x(b.first)}
                  x2={x(b.first)}
                  y1={y(b.min)}
                  y2={y(b.max)}
                  strokeWidth={3}
                  strokeLinecap="round"
                  strokeOpacity={0.75}
                />
              ),
            )}
          </g>
        ))}
        <text x={LEFT} y={H - 6} fontSize="11">first kernel</text>
        <text x={W - RIGHT} y={H - 6} fontSize="11" textAnchor="end">
          kernel {formatCount(rows.length)} of {formatCount(total)}: (simulated − measured) / measured, clipped at ±{scale} %
        </text>
      </svg>
      <figcaption className="legend">
        {configs.map((c, i) => (
          <span key={c} className="legend-item">
            <svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={COLOURS[i % COLOURS.length]} /></svg> {c}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
