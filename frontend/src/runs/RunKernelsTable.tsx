import { useEffect, useRef, useState } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import { formatCount, formatNs } from "../format";
import type { RunKernelRowFragment } from "../gql/graphql";
import { formatPct } from "./compare";
import { KernelName, kernelMatches } from "../components/KernelName";
import { THREAD_INSTRUCTIONS } from "../units";
import { sampledMark } from "../sampling/sampled";
import { emptyStatNote } from "./emptyStat";
import type { RunRow } from "./runRow";
import { StatName } from "./StatName";
import { formatStat, headerUnit, type StatCounter, type StatValues } from "./stats";

const ROW = 30;
// The kernels' own columns (as .rkrow lays them out), then one per picked statistic.
const BASE_COLUMNS = "70px minmax(180px, 1fr) 90px 110px 110px 70px 100px 100px 90px";
const BASE_WIDTH = 1000;
const STAT_WIDTH = 120;
// A sampled run's column (simulated, or projected from which launch), and with a check the
// full run's: its cycles and the error against them.
const SAMPLED_COLUMN = "100px ";
const SAMPLED_WIDTH = 100;
const FULL_COLUMNS = "110px 90px ";
const FULL_WIDTH = 200;

/**
 * Per-kernel results of a run, virtualised, read by pages (onNearEnd asks for the next one as
 * the rows scroll near the last read; total is the run's count), with a search over the mangled
 * and demangled names of the kernels read so far, and
 * a column for each picked statistic (columns: their indexes in counters and statValues), the
 * run's totals of those in a first row when known. On a sampled run each kernel says whether it
 * was simulated or projected (from which launch), and with a check its full run's cycles and
 * the error against them.
 */
export function RunKernelsTable({
  kernels: all,
  total = all.length,
  onNearEnd,
  columns = [],
  totals,
  run = null,
  sampled = null,
}: {
  kernels: readonly RunKernelRowFragment[];
  /** The run's kernels, read or not; null before the first page. */
  total?: number | null;
  onNearEnd?: () => void;
  columns?: readonly { counter: StatCounter; index: number }[];
  totals?: StatValues | null;
  /** The run's totals of the kernels' own columns, for the Run row. */
  run?: RunRow | null;
  /** On a sampled run: whether it has a check against a full run. */
  sampled?: { checked: boolean } | null;
}) {
  const [text, setText] = useState("");
  const kernels = text.trim() ? all.filter((k) => kernelMatches(k, text)) : all;
  const scroller = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({ count: kernels.length, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 15 });
  const items = v.getVirtualItems();
  const last = items[items.length - 1]?.index ?? 0;
  useEffect(() => {
    if (all.length > 0 && last > kernels.length - 50) onNearEnd?.();
  }, [last, kernels.length, all.length, onNearEnd]);
  if (total == null && all.length === 0) return <p aria-busy="true">Loading kernels…</p>;
  if (all.length === 0) return <p className="muted">No kernel has finished yet.</p>;
  const count = Math.max(total ?? 0, all.length);
  const full = sampled?.checked ?? false;
  const extra = (sampled ? SAMPLED_COLUMN : "") + (full ? FULL_COLUMNS : "");
  const wide = columns.length > 0 || sampled != null;
  const grid = wide ? { gridTemplateColumns: `${BASE_COLUMNS} ${extra}${`${STAT_WIDTH}px `.repeat(columns.length)}` } : undefined;
  const width = wide
    ? { minWidth: BASE_WIDTH + (sampled ? SAMPLED_WIDTH : 0) + (full ? FULL_WIDTH : 0) + STAT_WIDTH * columns.length }
    : undefined;
  const stats = (vs: StatValues | null | undefined) =>
    columns.map(({ counter, index }) => (
      <span key={counter.name} role="cell" className="num" data-stat={counter.name}>
        {formatStat(vs?.[index], counter.unit)}
      </span>
    ));
  return (
    <>
    <label className="kernel-search">
      Search kernels{" "}
      <input
        type="search"
        aria-label="Search run kernels by name, mangled or demangled"
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      {text.trim() && (
        <span className="hint">
          {" "}
          {formatCount(kernels.length)} of {formatCount(all.length)}
          {all.length < count ? " read so far (scroll to read more)" : ""}
        </span>
      )}
    </label>
    <p className="hint" data-testid="kernel-count">
      {all.length < count
        ? `${formatCount(count)} kernels, ${formatCount(all.length)} read so far: more as the table scrolls`
        : `${formatCount(count)} kernel${count === 1 ? "" : "s"}`}
    </p>
    <div className="ktable-wrap">
    <div role="table" aria-label="Run kernels" aria-rowcount={(text.trim() ? kernels.length : count) + 1} className="ktable" style={width}>
      <div role="rowgroup">
        <div role="row" aria-rowindex={1} className="rkrow khead" style={grid}>
          <span role="columnheader">Kernel</span>
          <span role="columnheader">Name</span>
          <span role="columnheader" className="num">Launch</span>
          <span role="columnheader" className="num">Cycles</span>
          <span role="columnheader" className="num" title={THREAD_INSTRUCTIONS}>
            Instructions <span className="unit">(thread)</span>
          </span>
          <span role="columnheader" className="num" title="Thread instructions per simulated cycle">
            IPC <span className="unit">(thread)</span>
          </span>
          <span role="columnheader" className="num">Simulated</span>
          <span role="columnheader" className="num">Measured</span>
          <span role="columnheader" className="num">Error</span>
          {sampled && (
            <span role="columnheader" title="Simulated (a representative or its warm-up), or projected from the simulated launch at that position of the trace's kernel list">
              Sampled
            </span>
          )}
          {full && (
            <>
              <span role="columnheader" className="num" title="The full run's simulated cycles of the same launch">
                Full run <span className="unit">(cycles)</span>
              </span>
              <span role="columnheader" className="num" title="100 × (cycles − full run's) / full run's">
                vs full
              </span>
            </>
          )}
          {columns.map(({ counter, index }) => {
            const empty = totals ? emptyStatNote(counter.name, totals[index], count) : null;
            return (
              <span key={counter.name} role="columnheader" className="num stathead" title={`${counter.name}: ${counter.kind.toLowerCase()}, in ${counter.unit}${empty ? `; ${empty}` : ""}`}>
                <StatName name={counter.name} /> <span className="unit">({headerUnit(counter.unit)})</span>
                {empty && <span className="unit">{empty}</span>}
              </span>
            );
          })}
        </div>
        {((columns.length > 0 && totals) || run) && (
          <div role="row" className="rkrow totals-row" style={grid} data-testid="stat-totals">
            <span role="cell">Run</span>
            <span role="cell" className="muted">
              all {formatCount(count)} kernels
            </span>
            <span role="cell" />
            <span role="cell" className="num">{formatCount(run?.cycles)}</span>
            <span role="cell" className="num">{formatCount(run?.instructions)}</span>
            <span role="cell" className="num">{run?.ipc == null ? "—" : run.ipc.toFixed(2)}</span>
            <span role="cell" className="num">{formatNs(run?.simNs)}</span>
            <span role="cell" className="num" title="Of the kernels compared with real timing">{formatNs(run?.measuredNs)}</span>
            <span role="cell" className="num" title="Of the kernels compared with real timing: 100 × (simulated − measured) / measured">{formatPct(run?.errorPct)}</span>
            {Array.from({ length: (sampled ? 1 : 0) + (full ? 2 : 0) }, (_, i) => (
              <span key={i} role="cell" />
            ))}
            {stats(totals)}
          </div>
        )}
      </div>
      <div ref={scroller} className="kscroll" role="rowgroup" tabIndex={0} aria-label="Run kernel rows, scrollable">
        <div style={{ height: v.getTotalSize(), position: "relative" }}>
          {items.map((it) => {
            const k = kernels[it.index];
            const mark = sampledMark(k);
            return (
              <div
                key={it.key}
                role="row"
                aria-rowindex={it.index + 2}
                className="rkrow"
                style={{ ...grid, position: "absolute", top: 0, left: 0, right: 0, height: ROW, transform: `translateY(${it.start}px)` }}
              >
                <span role="cell">{k.kernelId}</span>
                <span role="cell">
                  <KernelName name={k.name} displayName={k.displayName} demangledName={k.demangledName} />
                  {k.truncated && <span className="tag" title="The simulator's cycle limit cut this kernel short">truncated</span>}
                </span>
                <span role="cell" className="num">{k.launchUid ?? "—"}</span>
                <span role="cell" className="num">{formatCount(k.simCycles)}</span>
                <span role="cell" className="num">{formatCount(k.simInstructions)}</span>
                <span role="cell" className="num">{k.ipc == null ? "—" : k.ipc.toFixed(2)}</span>
                <span role="cell" className="num">{formatNs(k.simTimeNs)}</span>
                <span role="cell" className="num">{formatNs(k.measuredNs)}</span>
                <span role="cell" className="num">{formatPct(k.errorPct)}</span>
                {sampled && (
                  <span role="cell">
                    {mark && (
                      <span
                        className={`tag ${k.simulated ? "simulated" : "projected"}`}
                        data-testid={k.simulated ? "simulated-mark" : "projected-mark"}
                        title={k.simulated ? "Simulated: a representative or its warm-up" : `Projected from the simulation of launch ${k.projectedFrom ?? "?"}`}
                      >
                        {mark}
                      </span>
                    )}
                  </span>
                )}
                {full && (
                  <>
                    <span role="cell" className="num">{formatCount(k.fullCycles)}</span>
                    <span role="cell" className="num">{formatPct(k.fullErrorPct)}</span>
                  </>
                )}
                {stats(k.statValues)}
              </div>
            );
          })}
        </div>
      </div>
    </div>
    </div>
    </>
  );
}
