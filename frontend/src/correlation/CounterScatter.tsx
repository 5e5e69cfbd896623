import { useEffect, useMemo, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { CounterPairFieldsFragment as Pair } from "../gql/graphql";
import { formatPct } from "../runs/compare";
import { formatTick, formatValue, nearestPoint, scatterData, type AxisKind } from "./scatter";

const DISTR: Record<AxisKind, 1 | 3 | 4> = { linear: 1, log: 3, asinh: 4 };
const AXIS_WORDS: Record<AxisKind, string> = {
  linear: "linear axes",
  log: "log–log axes",
  asinh: "log-like axes that are linear near 0 (some values are 0 or less)",
};
const SIMULATED = "#2457c5";
const PROJECTED = "#ea580c";

interface Tip {
  /** Index into the drawn pairs. */
  i: number;
  /** The point's position in the plotting area, in CSS pixels. */
  x: number;
  y: number;
  /** The plotting area's offset in the figure. */
  dx: number;
  dy: number;
}

/**
 * One statistic's scatter as the correlator draws it: simulated (y) against measured (x) per
 * kernel, on log axes when the values span decades, with the y = x diagonal; a sampled run's
 * projected launches apart from the launches it simulated. Pointing at a point (or stepping
 * through them with the arrow keys) names its kernel.
 */
export function CounterScatter({
  statistic,
  unit,
  pairs,
  width = 640,
  height = 420,
}: {
  statistic: string;
  unit: string;
  pairs: readonly Pair[];
  width?: number;
  height?: number;
}) {
  const el = useRef<HTMLDivElement>(null);
  const fig = useRef<HTMLElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [tip, setTip] = useState<Tip | null>(null);
  const data = useMemo(() => scatterData(pairs), [pairs]);

  useEffect(() => {
    if (!el.current || data.pairs.length === 0) return;
    const { axis } = data;
    const scale = { distr: DISTR[axis.kind], asinh: axis.threshold, range: [axis.min, axis.max] as [number, number] };
    const ticks = (_u: uPlot, vals: number[]) => vals.map(formatTick);
    const posOf = (u: uPlot, i: number): [number, number] => [
      u.valToPos(data.pairs[i].measured, "x"),
      u.valToPos(data.pairs[i].simulated, "y"),
    ];
    const opts: uPlot.Options = {
      width,
      height,
      scales: { x: { time: false, ...scale }, y: { ...scale } },
      axes: [
        { label: `Measured ${statistic}`, values: ticks, size: 40 },
        { label: `Simulated ${statistic}`, values: ticks, size: 60 },
      ],
      legend: { show: false },
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      series: [
        {},
        {
          label: data.sampled ? "simulated (representative)" : "kernel",
          stroke: SIMULATED,
          paths: () => null,
          points: { show: true, size: 7, stroke: SIMULATED, fill: `${SIMULATED}99` },
        },
        {
          label: "projected",
          stroke: PROJECTED,
          paths: () => null,
          points: { show: true, size: 6, stroke: PROJECTED, fill: "transparent", width: 1.5 },
        },
        { label: "y = x", stroke: "#888", dash: [6, 4], width: 1, spanGaps: true, points: { show: false } },
      ],
      hooks: {
        setCursor: [
          (u) => {
            const { left, top } = u.cursor;
            if (left == null || top == null || left < 0) return setTip((t) => (t && t.i >= 0 && document.activeElement === fig.current ? t : null));
            const i = nearestPoint(data.pairs.length, (j) => posOf(u, j), left, top);
            if (i == null) return setTip(null);
            const [x, y] = posOf(u, i);
            setTip({ i, x, y, dx: u.over.offsetLeft, dy: u.over.offsetTop });
          },
        ],
      },
    };
    const p = new uPlot(opts, [data.xs, data.simulated, data.projected, data.diagonal] as uPlot.AlignedData, el.current);
    plot.current = p;
    setTip(null);
    return () => {
      plot.current = null;
      p.destroy();
    };
  }, [data, statistic, width, height]);

  if (data.pairs.length === 0) return <p className="muted">No kernel has both a simulated and a measured {statistic}.</p>;

  // The arrow keys step through the points by measured value, as the pointer would.
  const onKey = (e: React.KeyboardEvent) => {
    const u = plot.current;
    if (!u || (e.key !== "ArrowRight" && e.key !== "ArrowLeft")) return;
    e.preventDefault();
    const n = data.pairs.length;
    const i = tip == null ? (e.key === "ArrowRight" ? 0 : n - 1) : (tip.i + (e.key === "ArrowRight" ? 1 : n - 1)) % n;
    const x = u.valToPos(data.pairs[i].measured, "x");
    const y = u.valToPos(data.pairs[i].simulated, "y");
    setTip({ i, x, y, dx: u.over.offsetLeft, dy: u.over.offsetTop });
  };
  const p = tip ? data.pairs[tip.i] : null;
  const projected = data.pairs.filter((q) => q.representative === false).length;
  return (
    <figure
      ref={fig}
      className="chart counter-scatter"
      aria-label={`Simulated against measured ${statistic} of ${data.pairs.length} kernels, ${AXIS_WORDS[data.axis.kind]}`}
      data-testid="counter-scatter"
      data-points={data.pairs.length}
      data-axes={data.axis.kind}
      tabIndex={0}
      onKeyDown={onKey}
      onBlur={() => setTip(null)}
      style={{ width: width + 16 }}
    >
      <div ref={el} />
      {tip && p && (
        <div
          className="chart-tip"
          role="tooltip"
          data-x={Math.round(tip.x)}
          data-y={Math.round(tip.y)}
          style={{ left: Math.min(tip.dx + tip.x + 12, width - 260), top: tip.dy + tip.y + 12 }}
        >
          <div className="mono">
            #{p.kernelId} {p.displayName}
            {p.representative === true && <span className="tag simulated">simulated</span>}
            {p.representative === false && <span className="tag projected">projected</span>}
          </div>
          <div>
            simulated {formatValue(p.simulated)} · measured {formatValue(p.measured)} {unit && <span className="muted">({unit})</span>} ·{" "}
            {p.errorPct == null ? "measured 0" : formatPct(p.errorPct)}
          </div>
          {p.measurements > 1 && (
            <div className="muted">
              {p.measurements} measurements, {formatValue(p.measuredMin)} – {formatValue(p.measuredMax)}
            </div>
          )}
        </div>
      )}
      <figcaption className="hint">
        Each point is a kernel ({AXIS_WORDS[data.axis.kind]}); on the dashed line simulated equals measured.
        {data.sampled && (
          <>
            {" "}
            <span style={{ color: SIMULATED }}>●</span> launches the sampled run simulated,{" "}
            <span style={{ color: PROJECTED }}>○</span> launches it projected from them ({projected}).
          </>
        )}{" "}
        Arrow keys step through the points.
      </figcaption>
    </figure>
  );
}
