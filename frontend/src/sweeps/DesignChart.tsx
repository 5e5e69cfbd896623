import { formatNs } from "../format";
import type { AxisChart } from "./design";

const W = 560;
const H = 260;
const LEFT = 72;
const RIGHT = 16;
const TOP = 12;
const BOTTOM = 40;
/** Colours of the lines, in the legend's order. */
const COLOURS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#a16207", "#db2777"];

/**
 * One swept parameter (x) against simulated time (y), a line per combination of the other
 * parameters; a sampled cell's 95 % interval is drawn as an error bar around its point.
 */
export function DesignChart({ chart }: { chart: AxisChart }) {
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const points = chart.lines.flatMap((l) => l.points);
  const xs = chart.ticks.map((t) => t.x);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const yMax = Math.max(1, ...points.map((p) => p.highNs ?? p.timeNs)) * 1.08;
  const x = (v: number) => LEFT + (x1 === x0 ? plotW / 2 : ((v - x0) / (x1 - x0)) * plotW);
  const y = (ns: number) => TOP + plotH - (ns / yMax) * plotH;
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * yMax);
  return (
    <figure className="design-chart" data-axis={chart.axis}>
      <svg role="img" aria-label={`Simulated time against ${chart.axis}`} width={W} height={H} className="mape-chart">
        {yTicks.map((t) => (
          <g key={t}>
            <line x1={LEFT} x2={W - RIGHT} y1={y(t)} y2={y(t)} stroke="currentColor" strokeOpacity={t === 0 ? 0.5 : 0.12} />
            <text x={LEFT - 6} y={y(t) + 4} textAnchor="end" fontSize="11">{formatNs(t)}</text>
          </g>
        ))}
        {chart.ticks.map((t) => (
          <text key={t.label} x={x(t.x)} y={H - BOTTOM + 16} textAnchor="middle" fontSize="11">{t.label}</text>
        ))}
        <text x={LEFT + plotW / 2} y={H - 6} textAnchor="middle" fontSize="12">{chart.axis}</text>
        {points.length === 0 && (
          <text x={LEFT + plotW / 2} y={TOP + plotH / 2} textAnchor="middle" fontSize="12">no cell has a simulated time yet</text>
        )}
        {chart.lines.map((l, i) => {
          const colour = COLOURS[i % COLOURS.length];
          return (
            <g key={l.name} data-line={l.name} stroke={colour} fill={colour}>
              {l.points.length > 1 && (
                <polyline fill="none" strokeWidth={2} points={l.points.map((p) => `${x(p.x)},${y(p.timeNs)}`).join(" ")} />
              )}
              {l.points.map((p) => (
                <g key={p.cell} data-cell={p.cell}>
                  {p.lowNs != null && p.highNs != null && (
                    <g data-testid="interval" strokeWidth={1.5}>
                      <line x1={x(p.x)} x2={x(p.x)} y1={y(p.lowNs)} y2={y(p.highNs)} />
                      <line x1={x(p.x) - 4} x2={x(p.x) + 4} y1={y(p.lowNs)} y2={y(p.lowNs)} />
                      <line x1={x(p.x) - 4} x2={x(p.x) + 4} y1={y(p.highNs)} y2={y(p.highNs)} />
                    </g>
                  )}
                  <circle cx={x(p.x)} cy={y(p.timeNs)} r={4} strokeWidth={0}>
                    <title>
                      {`${chart.axis} ${p.label}${l.name ? ` (${l.name})` : ""}: ${formatNs(p.timeNs)}` +
                        (p.lowNs != null && p.highNs != null ? `, 95 % interval ${formatNs(p.lowNs)} – ${formatNs(p.highNs)}` : "")}
                    </title>
                  </circle>
                </g>
              ))}
            </g>
          );
        })}
      </svg>
      {chart.lines.length > 1 && (
        <figcaption className="legend">
          {chart.lines.map((l, i) => (
            <span key={l.name} className="legend-item">
              <svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={COLOURS[i % COLOURS.length]} /></svg> {l.name}
            </span>
          ))}
        </figcaption>
      )}
    </figure>
  );
}
