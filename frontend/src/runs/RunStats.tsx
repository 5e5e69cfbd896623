import { useCallback, useState } from "react";
import { DownloadCsv } from "../components/DownloadCsv";
import { formatBytes, formatDurationMs } from "../format";
import type { FailureClass, RunDetailFragment, StatKind } from "../gql/graphql";
import { emptyStatNote } from "./emptyStat";
import { FAILURE_CLASSES, KIND_LABELS, formatStat, headerUnit, loadColumns, saveColumns, shortSum, statOf, type StatCounter, type StatValues } from "./stats";

/** The picked statistics columns, remembered in localStorage across reloads and runs. */
export function usePickedColumns(): [string[], (names: string[]) => void] {
  const [picked, setPicked] = useState<string[]>(() => loadColumns());
  const set = useCallback((names: string[]) => {
    saveColumns(names);
    setPicked(names);
  }, []);
  return [picked, set];
}

/** Checkboxes for the run's statistics, by kind: the kernels table shows those checked. */
export function StatColumnPicker({
  counters,
  picked,
  onChange,
  totals,
  kernels = 0,
}: {
  counters: readonly StatCounter[];
  picked: readonly string[];
  onChange: (names: string[]) => void;
  /** The run's totals, in counters' order: a counter no kernel had says why. */
  totals?: StatValues | null;
  /** How many kernels the run has. */
  kernels?: number;
}) {
  if (counters.length === 0) return null;
  const shown = counters.filter((c) => picked.includes(c.name)).length;
  const toggle = (name: string, on: boolean) => onChange(on ? [...picked.filter((n) => n !== name), name] : picked.filter((n) => n !== name));
  const kinds = Object.keys(KIND_LABELS) as StatKind[];
  return (
    <details className="column-picker">
      <summary>Statistics columns ({shown} shown)</summary>
      <div className="picker-groups">
        {kinds.map((kind) => {
          const cs = counters.filter((c) => c.kind === kind);
          if (cs.length === 0) return null;
          return (
            <fieldset key={kind}>
              <legend>{KIND_LABELS[kind]}</legend>
              {cs.map((c) => {
                const empty = totals ? emptyStatNote(c.name, totals[counters.indexOf(c)], kernels) : null;
                return (
                  <label key={c.name}>
                    <input type="checkbox" checked={picked.includes(c.name)} onChange={(e) => toggle(c.name, e.target.checked)} /> {c.name}{" "}
                    <span className="muted">({headerUnit(c.unit)})</span>
                    {empty && <span className="muted"> — {empty}</span>}
                  </label>
                );
              })}
            </fieldset>
          );
        })}
      </div>
      {shown > 0 && (
        <button type="button" onClick={() => onChange([])}>
          Hide all
        </button>
      )}
    </details>
  );
}

/** A failed run's class and the simulator log's decisive line. */
export function FailureDetails({ failureClass, line }: { failureClass: FailureClass | null | undefined; line: string | null | undefined }) {
  if (!failureClass) return null;
  return (
    <div className="failure" data-testid="failure-class">
      <span className="tag" title={`Failure class ${failureClass}, as Accel-Sim's job_status.py classes failed jobs`}>
        {FAILURE_CLASSES[failureClass] ?? failureClass}
      </span>
      {line && (
        <pre className="decisive-line" aria-label="Decisive log line">
          {line}
        </pre>
      )}
    </div>
  );
}

/**
 * What produced the run and what it cost: wall time, peak memory, simulation rate (the last
 * kernel's sim_rate_insts), simulator build and content sums; unknown ones are left out.
 */
export function RunFiguresList({
  figures,
  counters,
  totals,
}: {
  figures: RunDetailFragment["figures"];
  counters: readonly StatCounter[];
  totals: StatValues | null | undefined;
}) {
  const rate = statOf(counters, totals, "sim_rate_insts");
  const sums: [string, string | null | undefined][] = [
    ["Simulator", figures.simulatorSum],
    ["Config", figures.configSum],
    ["Trace", figures.traceSum],
  ];
  const items: [string, React.ReactNode, string?][] = [];
  if (figures.wallSeconds != null) items.push(["Wall time", formatDurationMs(figures.wallSeconds * 1000), "wall-time"]);
  if (figures.peakRssBytes != null) items.push(["Peak memory", formatBytes(figures.peakRssBytes), "peak-memory"]);
  if (rate != null) items.push(["Simulation rate", `${formatStat(rate, "insts/s")} thread insts/s`, "sim-rate"]);
  if (figures.simulatorBuild) items.push(["Simulator build", <span className="mono">{figures.simulatorBuild}</span>, "sim-build"]);
  for (const [k, sum] of sums) {
    if (sum) {
      items.push([
        `${k} sum`,
        <code title={`SHA-256 ${sum}`}>{shortSum(sum)}</code>,
      ]);
    }
  }
  if (figures.traceSum && figures.traceCurrent === false) {
    items.push([
      "Trace changed",
      "the trace was post-processed again since this run launched: the run simulated its earlier files (see Trace sum)",
      "trace-changed",
    ]);
  }
  if (items.length === 0) return null;
  return (
    <dl className="facts" aria-label="Run figures" data-testid="run-figures">
      {items.map(([k, v, testid]) => (
        <div key={k} className="fact" data-testid={testid}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Downloads the run's kernels as CSV (GET /runs/<id>/kernels.csv). */
export function DownloadKernelsCsv({ id }: { id: string }) {
  return <DownloadCsv url={`/runs/${encodeURIComponent(id)}/kernels.csv`} filename={`run-${id}-kernels.csv`} />;
}
