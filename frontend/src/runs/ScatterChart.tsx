import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { formatNs } from "../format";
import { formatPct, scatterPoints, type MeasuredKernel } from "./compare";

interface Tip {
  left: number;
  top: number;
  kernel: MeasuredKernel;
}

/** Simulated against measured time per kernel, log–log, with the y = x line of a perfect match. */
export function ScatterChart({ kernels, width = 640, height = 420 }: { kernels: readonly MeasuredKernel[]; width?: number; height?: number }) {
  const el = useRef<HTMLDivElement>(null);
  const [tip, setTip] = useState<Tip | null>(null);
  const pts = scatterPoints(kernels);

  useEffect(() => {
    if (!el.current || pts.x.length === 0) return;
    const lo = pts.min / 1.5;
    const hi = pts.max * 1.5;
    // Two x-sorted series on one x array: the kernels as points, and y = x as a line.
    const xs = [lo, ...pts.x, hi];
    const ys: (number | null)[] = [null, ...pts.y, null];
    const ident = xs.map((x, i) => (i === 0 || i === xs.length - 1 ? x : null));
    const opts: uPlot.Options = {
      width,
      height,
      scales: {
        x: { time: false, distr: 3, range: [lo, hi] },
        y: { distr: 3, range: [lo, hi] },
      },
      axes: [
        { label: "Measured", values: (_u, vals) => vals.map((v) => (v == null ? "" : formatNs(v))), size: 40 },
        { label: "Simulated", values: (_u, vals) => vals.map((v) => (v == null ? "" : formatNs(v))), size: 70 },
      ],
      legend: { show: false },
      cursor: { drag: { x: false, y: false }, points: { size: 10 } },
      series: [
        {},
        {
          label: "kernel",
          stroke: "#2457c5",
          fill: "#2457c5",
          paths: () => null,
          points: { show: true, size: 6, stroke: "#2457c5", fill: "#2457c580" },
        },
        { label: "y = x", stroke: "#888", dash: [6, 4], width: 1, spanGaps: true, points: { show: false } },
      ],
      hooks: {
        setCursor: [
          (u) => {
            const i = u.cursor.idx;
            if (i == null || i === 0 || i === xs.length - 1 || u.cursor.left == null || u.cursor.left < 0) {
              setTip(null);
              return;
            }
            setTip({ left: u.valToPos(xs[i], "x"), top: u.valToPos(ys[i] as number, "y"), kernel: pts.kernels[i - 1] });
          },
        ],
      },
    };
    const plot = new uPlot(opts, [xs, ys, ident] as uPlot.AlignedData, el.current);
    return () => plot.destroy();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [JSON.stringify(pts.x), JSON.stringify(pts.y), width, height]);

  if (pts.x.length === 0) return <p className="muted">No kernel has both a simulated and a measured time.</p>;
  return (
    <figure className="chart" aria-label={`Simulated versus measured time of ${pts.x.length} kernels, log–log`} style={{ width: width + 16 }}>
      <div ref={el} />
      {tip && (
        <div className="chart-tip" role="tooltip" style={{ left: tip.left + 60, top: tip.top }}>
          <div className="mono">#{tip.kernel.kernelId} {tip.kernel.displayName ?? tip.kernel.name}</div>
          <div>
            simulated {formatNs(tip.kernel.simTimeNs)} · measured {formatNs(tip.kernel.measuredNs)} ·{" "}
            {formatPct(tip.kernel.errorPct)}
          </div>
        </div>
      )}
      <figcaption className="hint">Each point is a kernel; on the dashed line simulated equals measured.</figcaption>
    </figure>
  );
}
