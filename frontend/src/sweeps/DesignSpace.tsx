import { useEffect, useState } from "react";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { DownloadCsv } from "../components/DownloadCsv";
import { formatCount, formatNs } from "../format";
import type { DesignSpaceFieldsFragment } from "../gql/graphql";
import { newest } from "../time";
import { DesignChart } from "./DesignChart";
import { axisChart, axisName, formatSpeedup, rowSpeedups, speedups, valueText } from "./design";
import { SweepDesignQuery, SweepDesignUpdatedSubscription } from "./documents";

/** Cells beyond this many are left out of the per-kernel and per-step tables' columns. */
const MAX_COLUMNS = 12;

/**
 * A copy of the design space with the updatedAt of the progress it came with in a sweepUpdated
 * message; a query's answer carries none and never wins over a message's (see SweepPage).
 */
interface Copy {
  ds: DesignSpaceFieldsFragment;
  updatedAt?: string | null;
}

/**
 * A design sweep's cells side by side, live: per cell its simulated cycles, time and speedup
 * against the baseline the user picks, a chart of each swept parameter against time, the
 * speedups per kernel name and per model step, and the CSV of it all.
 */
export function DesignSpace({ id }: { id: string }) {
  const [{ data, error }] = useLiveQuery({ query: SweepDesignQuery, variables: { id } });
  const [copy, setCopy] = useState<Copy | null>(null);
  const [picked, setPicked] = useState<string | null>(null);
  useEffect(() => {
    const ds = data?.sweep?.designSpace;
    if (ds) setCopy((c) => newest(c, { ds, updatedAt: null }));
  }, [data]);
  useEvents(SweepDesignUpdatedSubscription, { id }, (d) => {
    const ds = d.sweepUpdated.designSpace;
    if (ds) setCopy((c) => newest(c, { ds, updatedAt: d.sweepUpdated.sweep.progress.updatedAt }));
  });
  if (error && !copy) return <p role="alert" className="error">Could not read the design space: {error.message}</p>;
  if (!copy) return <p aria-busy="true">Reading the design space…</p>;
  const { ds } = copy;
  const cells = ds.cells;
  let b = cells.findIndex((c) => c.simConfig === (picked ?? ds.baseline));
  if (b < 0) b = 0;
  const sp = speedups(cells, b);
  // The server's bounds are paired against its baseline (two sampled runs of one plan share their
  // representatives' errors): tighter than the two intervals the browser can combine.
  if (cells[b]?.simConfig === ds.baseline) {
    cells.forEach((c, i) => {
      if (c.paired && c.speedupLow != null && c.speedupHigh != null) sp[i] = { ...sp[i], low: c.speedupLow, high: c.speedupHigh };
    });
  }
  const validated = cells.some((c) => c.fullSpeedup != null);
  const powered = cells.some((c) => c.energyJ != null);
  const bases = new Set(cells.map((c) => c.base)).size > 1;
  const cellName = (i: number) =>
    [bases ? cells[i].base : "", ...ds.axes.map((a, k) => `${axisName(a)} ${valueText(a, cells[i].values[k] ?? "")}`)]
      .filter(Boolean)
      .join(", ") || cells[i].simConfig;
  const baseline = cells[b]?.simConfig ?? "";
  const csv = `/sweeps/${encodeURIComponent(id)}/design.csv${baseline ? `?baseline=${encodeURIComponent(baseline)}` : ""}`;
  const columns = cells.slice(0, MAX_COLUMNS);
  return (
    <div className="design-space" data-testid="design-space">
      <div className="toolbar">
        <label>
          Baseline{" "}
          <select aria-label="Baseline" value={baseline} onChange={(e) => setPicked(e.target.value)}>
            {cells.map((c, i) => (
              <option key={c.simConfig} value={c.simConfig}>
                {cellName(i)}
                {c.shipped ? " (as shipped)" : ""}
              </option>
            ))}
          </select>
        </label>{" "}
        <DownloadCsv url={csv} filename={`sweep-${id}-design.csv`} />
      </div>
      <table className="traces" aria-label="Design space">
        <thead>
          <tr>
            {bases && <th scope="col">Base</th>}
            {ds.axes.map((a, k) => (
              <th scope="col" key={k} className="mono">{axisName(a)}</th>
            ))}
            <th scope="col">Succeeded</th>
            <th scope="col">Cycles</th>
            <th scope="col">Simulated time</th>
            <th scope="col">Speedup</th>
            {powered && <th scope="col" title="AccelWattch's energy (a variant with PWR_ENABLE: -power_simulation_enabled 1)">Energy</th>}
            {powered && <th scope="col">Average power</th>}
            {powered && <th scope="col" title="warp instructions per joule">Performance per watt</th>}
            {validated && <th scope="col" title="the speedup the cells' validation runs (full runs) give, and the sampled speedup's error against it">Full runs' speedup</th>}
          </tr>
        </thead>
        <tbody>
          {cells.map((c, i) => (
            <tr key={c.simConfig} data-cell={c.simConfig} data-baseline={i === b ? "yes" : undefined} title={c.simConfig}>
              {bases && <td className="mono">{c.base}</td>}
              {ds.axes.map((a, k) => (
                <td key={k} className="mono">{valueText(a, c.values[k] ?? "")}</td>
              ))}
              <td>
                {c.succeeded} of {c.runs}
                {c.sampled > 0 && <span className="tag" title="projected from a sampling plan's representatives"> sampled</span>}
              </td>
              <td data-testid={`cycles-${i}`}>{c.cycles == null ? "—" : formatCount(Math.round(c.cycles))}</td>
              <td data-testid={`time-${i}`}>
                {formatNs(c.timeNs)}
                {c.timeLowNs != null && c.timeHighNs != null && (
                  <span className="hint"> ({formatNs(c.timeLowNs)} – {formatNs(c.timeHighNs)})</span>
                )}
              </td>
              <td data-testid={`speedup-${i}`}>
                {i === b ? "baseline" : formatSpeedup(sp[i].speedup)}
                {i !== b && sp[i].low != null && sp[i].high != null && (
                  <>
                    <span className="hint"> ({formatSpeedup(sp[i].low)} – {formatSpeedup(sp[i].high)})</span>
                    {sp[i].low! <= 1 && sp[i].high! >= 1 && (
                      <span className="tag" data-testid={`not-significant-${i}`} title="the 95 % interval holds 1: this does not say which is faster">
                        {" "}not significant
                      </span>
                    )}
                  </>
                )}
              </td>
              {powered && <td data-testid={`energy-${i}`}>{c.energyJ == null ? "—" : `${formatSig(c.energyJ * 1e3)} mJ`}</td>}
              {powered && <td>{c.avgPowerW == null ? "—" : `${formatSig(c.avgPowerW)} W`}</td>}
              {powered && <td>{c.instsPerJoule == null ? "—" : `${formatSig(c.instsPerJoule / 1e9)} G insts/J`}</td>}
              {validated && (
                <td data-testid={`full-speedup-${i}`}>
                  {i === b ? "baseline" : formatSpeedup(c.fullSpeedup ?? null)}
                  {i !== b && c.speedupErrorPct != null && (
                    <span className="hint"> (sampled off by {c.speedupErrorPct >= 0 ? "+" : ""}{c.speedupErrorPct.toFixed(2)} %)</span>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {ds.axes.length > 0 && (
        <div className="design-charts">
          {ds.axes.map((_, j) => (
            <DesignChart key={j} chart={axisChart(ds.axes, cells, j)} />
          ))}
        </div>
      )}
      {ds.kernels.length > 0 && (
        <RowTable
          label="Speedup per kernel name"
          head="Kernel"
          rows={ds.kernels.map((k) => ({ key: k.name, name: k.name, times: k.timeNs }))}
          columns={columns.map((_, i) => cellName(i))}
          b={b}
          more={cells.length - columns.length}
        />
      )}
      {ds.steps.length > 0 && (
        <RowTable
          label="Speedup per model step"
          head="Step"
          rows={ds.steps.map((s) => ({ key: `${s.traceId}/${s.step}`, name: `${s.traceId} step ${s.step}`, times: s.timeNs }))}
          columns={columns.map((_, i) => cellName(i))}
          b={b}
          more={cells.length - columns.length}
        />
      )}
    </div>
  );
}

/** Rows (kernel names, steps) × cells: each one's speedup against the baseline's. */
function RowTable({
  label,
  head,
  rows,
  columns,
  b,
  more,
}: {
  label: string;
  head: string;
  rows: { key: string; name: string; times: readonly (number | null)[] }[];
  columns: string[];
  b: number;
  more: number;
}) {
  return (
    <>
      <h3>{label}</h3>
      {more > 0 && <p className="muted">The first {columns.length} cells; the CSV has every one.</p>}
      <table className="traces" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">{head}</th>
            {columns.map((c) => (
              <th scope="col" key={c} className="mono">{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const s = rowSpeedups(r.times, b);
            return (
              <tr key={r.key} data-row={r.key}>
                <td className="mono">{r.name}</td>
                {columns.map((c, i) => (
                  <td key={c} title={r.times[i] == null ? undefined : formatNs(r.times[i])}>
                    {i === b ? "baseline" : formatSpeedup(s[i])}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

/** A figure to four significant digits. */
function formatSig(v: number): string {
  return Number(v.toPrecision(4)).toLocaleString("en-US");
}
