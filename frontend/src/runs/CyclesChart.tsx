import { useState } from "react";
import { formatCount } from "../format";
import { BREAKDOWNS, breakdownBars, type Breakdown, type StatCounter, type StatValues } from "./stats";

const COLORS = ["#2457c5", "#d9822b", "#2f9e44", "#c92a2a", "#7048e8", "#0c8599", "#e64980", "#868e96", "#5c940d", "#a61e4d"];
const LABEL_W = 170;
const BAR_W = 520;
const TOTAL_W = 120;
const ROW_H = 20;
const GAP = 6;

/**
 * "Where the cycles went": per kernel and for the whole run, the memory stage's stalls by cause
 * (see BREAKDOWNS) or the warp states (warp_state_*) as 100 % stacked bars, each bar's total
 * beside it. Plain SVG: a row per kernel, a segment per counter with its value in a tooltip.
 */
export function CyclesChart({
  counters,
  kernels,
  totals,
  total = kernels.length,
}: {
  counters: readonly StatCounter[];
  /** The run's kernels read so far, in launch order. */
  kernels: readonly { label: string; statValues: StatValues }[];
  /** The run's totals (statTotals): the run's bar, whatever kernels are read. */
  totals?: StatValues | null;
  /** The run's kernels, read or not. */
  total?: number;
}) {
  const [which, setWhich] = useState<Breakdown>("stalls");
  const { series, rows } = breakdownBars(counters, kernels, which, undefined, totals);
  const unit = BREAKDOWNS[which].unit;
  const height = rows.length * (ROW_H + GAP);
  const short = (name: string) => name.slice(BREAKDOWNS[which].prefix.length).replaceAll("_", " ");
  return (
    <figure className="cycles-chart" data-testid="cycles-chart">
      <div className="toolbar" role="radiogroup" aria-label="Breakdown">
        {(Object.keys(BREAKDOWNS) as Breakdown[]).map((b) => (
          <label key={b}>
            <input type="radio" name="breakdown" checked={which === b} onChange={() => setWhich(b)} /> {BREAKDOWNS[b].label}
          </label>
        ))}
      </div>
      {series.length === 0 || kernels.length === 0 ? (
        <p className="muted">{kernels.length === 0 ? "No kernel has finished yet." : "This run's statistics have no such counters."}</p>
      ) : (
        <>
          <ul className="legend" aria-label="Counters">
            {series.map((s, i) => (
              <li key={s.name}>
                <span className="swatch" style={{ background: COLORS[i % COLORS.length] }} /> {short(s.name)}
              </li>
            ))}
          </ul>
          <svg
            width={LABEL_W + BAR_W + TOTAL_W}
            height={height}
            role="img"
            aria-label={`${BREAKDOWNS[which].label} of the run and of ${rows.length - 1} kernels, as shares of each one's total`}
          >
            {rows.map((r, y) => {
              let x = LABEL_W;
              const top = y * (ROW_H + GAP);
              return (
                <g key={y} data-row={r.label}>
                  <text x={LABEL_W - 8} y={top + ROW_H - 5} textAnchor="end" className={y === 0 ? "run-row" : undefined}>
                    {r.label.length > 24 ? `${r.label.slice(0, 23)}…` : r.label}
                  </text>
                  {r.total === 0 ? (
                    <text x={LABEL_W} y={top + ROW_H - 5} className="muted">
                      none
                    </text>
                  ) : (
                    r.values.map((v, i) => {
                      const w = (BAR_W * v) / r.total;
                      const seg = (
                        <rect key={i} className="seg" x={x} y={top} width={w} height={ROW_H} fill={COLORS[i % COLORS.length]}>
                          <title>{`${r.label}: ${series[i].name} ${formatCount(v)} ${unit} (${((100 * v) / r.total).toFixed(1)} %)`}</title>
                        </rect>
                      );
                      x += w;
                      return seg;
                    })
                  )}
                  <text x={LABEL_W + BAR_W + 8} y={top + ROW_H - 5}>
                    {formatCount(r.total)}
                  </text>
                </g>
              );
            })}
          </svg>
          <figcaption className="hint" data-testid="cycles-caption">
            {which === "stalls" ? (
              <>
                Each bar is its kernel&apos;s memory-stage stalls (stall_shared_mem), its total at the right: an SM&apos;s load/store
                stage could not take its instruction, counted once per SM and cycle and summed over the SMs, so a bar can reach the
                SMs × the kernel&apos;s cycles. Its segments are the causes, which add up to it (other: causes the simulator does not
                print). DRAM-full and interconnect stalls are counted per memory partition, in other clocks, and are left out.
              </>
            ) : (
              <>Each bar is 100 % of its kernel&apos;s {unit} in these counters, its total at the right.</>
            )}{" "}
            The first bar is the whole run
            {Math.max(total, kernels.length) > rows.length - 1 ? `, then the first ${rows.length - 1} of ${formatCount(Math.max(total, kernels.length))} kernels` : ""}.
          </figcaption>
        </>
      )}
    </figure>
  );
}
