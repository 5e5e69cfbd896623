import { useCallback, useRef, useState } from "react";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { DownloadCsv } from "../components/DownloadCsv";
import { formatCount } from "../format";
import type { CounterPairFieldsFragment as Pair, RunCorrelationQuery as Data } from "../gql/graphql";
import { formatPct, isActive } from "../runs/compare";
import { CounterScatter } from "./CounterScatter";
import { RunCorrelationQuery, TraceChangedSubscription } from "./documents";
import { formatNrmse, formatPearson, noPairsYet } from "./figures";
import { formatValue } from "./scatter";
import { MAX_POINTS, useCounterPairs } from "./useCounterPairs";
import { useThrottledOnChange } from "./useThrottled";

type Stat = NonNullable<Data["run"]>["correlation"]["statistics"][number];

/**
 * A run's statistics set against the hardware counters its trace's profiles measured, as
 * Accel-Sim's correlator sets them: a table of the figures per statistic, the chosen
 * statistic's scatter and its kernels furthest off, and the CSVs. Shown when the trace has a
 * profile. Live: read again as the run goes on (at most every 2 s) and when the trace changes
 * (a profile read with a new upload).
 */
export function HardwareCounters({ runId, state, changed }: { runId: string; state: string; changed: string }) {
  const [{ data, error }, reexecute] = useLiveQuery({ query: RunCorrelationQuery, variables: { id: runId } });
  const refetch = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  useThrottledOnChange(`${state}|${changed}`, refetch, 2000);
  const run = data?.run;
  const seen = useRef<string | undefined>(undefined);
  seen.current = run?.trace.updatedAt;
  useEvents(
    TraceChangedSubscription,
    { id: run?.trace.id ?? "" },
    (d) => {
      if (d.traceUpdated.updatedAt !== seen.current) refetch();
    },
    !run,
  );
  const [picked, setPicked] = useState<string | null>(null);

  if (error && !data) return <p role="alert" className="error">Could not read the run&apos;s hardware counters: {error.message}</p>;
  if (!run || run.trace.profiles.length === 0) return null;
  const { statistics, gpuWarnings } = run.correlation;
  const chosen = statistics.find((s) => s.statistic === picked) ?? statistics[0];
  const version = `${run.updatedAt}|${run.trace.updatedAt}`;
  return (
    <section aria-labelledby="hw-title" data-testid="hardware-counters">
      <h2 id="hw-title">Hardware counters</h2>
      <p className="hint">
        The run&apos;s statistics set against what the trace&apos;s profiles measured (
        {run.trace.profiles.map((p) => p.file).join(", ")}), kernel by kernel, with the figures of Accel-Sim&apos;s correlator.
        Counts are compared as each side counts them (the hardware&apos;s 32-byte sectors, the simulator&apos;s accesses).
      </p>
      <GpuWarnings warnings={gpuWarnings} />
      {statistics.length === 0 ? (
        <p className="muted" data-testid="no-pairs">{noPairsYet(isActive(state))}</p>
      ) : (
        <>
          <FiguresTable statistics={statistics} chosen={chosen.statistic} onChoose={setPicked} />
          <div className="toolbar">
            <DownloadCsv url={`/runs/${encodeURIComponent(runId)}/correlation.csv`} filename={`run-${runId}-correlation.csv`} label="Download figures (CSV)" />
            <DownloadCsv url={`/runs/${encodeURIComponent(runId)}/counters.csv`} filename={`run-${runId}-counters.csv`} label="Download pairs (CSV)" />
          </div>
          <StatScatter key={chosen.statistic} runId={runId} stat={chosen} version={version} otherGpu={gpuWarnings.length > 0} />
        </>
      )}
    </section>
  );
}

/** Where a profile's GPU is not the config's or the trace's: said beside the figures, not hidden in a tooltip. */
export function GpuWarnings({ warnings, testid = "gpu-warnings" }: { warnings: readonly string[]; testid?: string }) {
  if (warnings.length === 0) return null;
  return (
    <div className="note warnings" role="note" data-testid={testid}>
      <strong>Another GPU:</strong> these figures set two different GPUs side by side.
      <ul>
        {warnings.map((w, i) => (
          <li key={i}>{w}</li>
        ))}
      </ul>
    </div>
  );
}

function FiguresTable({ statistics, chosen, onChoose }: { statistics: readonly Stat[]; chosen: string; onChoose: (s: string) => void }) {
  return (
    <table className="traces correlation" aria-label="Statistics against hardware counters">
      <thead>
        <tr>
          <th scope="col">Statistic</th>
          <th scope="col">Unit</th>
          <th scope="col" className="num">Kernels</th>
          <th scope="col" className="num" title="Pearson's correlation of simulated with measured">Correl</th>
          <th scope="col" className="num" title="Mean absolute percentage error over the kernels (the correlator's Err)">MAPE (Err)</th>
          <th scope="col" className="num" title="Σ|simulated − measured| / Σ measured">Agg_Err</th>
          <th scope="col" className="num" title="(Σ simulated − Σ measured) / Σ measured">Total err</th>
          <th scope="col" className="num" title="Root mean squared error over the mean measured value">NRMSE</th>
          <th scope="col" className="num" title="Kernels within 1 % of measured">&lt; 1 %</th>
          <th scope="col" className="num" title="Kernels within 10 % of measured">&lt; 10 %</th>
          <th scope="col" className="num" title="Kernels simulated above / below what was measured">Over / under</th>
          <th scope="col" className="num">Simulated total</th>
          <th scope="col" className="num">Measured total</th>
        </tr>
      </thead>
      <tbody>
        {statistics.map((s) => (
          <tr key={s.statistic} data-stat={s.statistic} className={s.statistic === chosen ? "chosen" : undefined}>
            <td>
              <button type="button" className="link mono" aria-pressed={s.statistic === chosen} onClick={() => onChoose(s.statistic)}>
                {s.statistic}
              </button>
            </td>
            <td className="muted">{s.unit}</td>
            <td className="num" data-figure="kernels">{formatCount(s.kernels)}</td>
            <td className="num" data-figure="pearson">{formatPearson(s.pearson)}</td>
            <td className="num" data-figure="mape">{formatPct(s.mapePct, false)}</td>
            <td className="num" data-figure="agg">{formatPct(s.aggregateErrorPct, false)}</td>
            <td className="num" data-figure="total">{formatPct(s.totalErrorPct)}</td>
            <td className="num" data-figure="nrmse">{formatNrmse(s.nrmse)}</td>
            <td className="num" data-figure="within1">{formatCount(s.within1Pct)}</td>
            <td className="num" data-figure="within10">{formatCount(s.within10Pct)}</td>
            <td className="num" data-figure="overunder">{s.over} / {s.under}</td>
            <td className="num">{formatValue(s.simTotal)}</td>
            <td className="num">{formatValue(s.measuredTotal)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The chosen statistic's scatter (its first MAX_POINTS kernels) and its kernels furthest off. */
function StatScatter({ runId, stat, version, otherGpu }: { runId: string; stat: Stat; version: string; otherGpu: boolean }) {
  const { pairs, total, loading, error } = useCounterPairs(runId, stat.statistic, version);
  return (
    <div className="counter-scatter-wrap">
      <h3>
        <span className="mono">{stat.statistic}</span>: simulated against measured
      </h3>
      {otherGpu && (
        <p className="warn-line" role="note">
          ⚠ Measured on another GPU than the config models or the trace was taken on: see above.
        </p>
      )}
      {error && <p role="alert" className="error">Could not read the kernels&apos; pairs: {error}</p>}
      {total == null ? (
        <p aria-busy="true">Loading the kernels…</p>
      ) : (
        <CounterScatter statistic={stat.statistic} unit={stat.unit} pairs={pairs} />
      )}
      {total != null && total > pairs.length && (
        <p className="hint" data-testid="scatter-more">
          The first {formatCount(pairs.length)} of {formatCount(total)} kernels
          {pairs.length >= MAX_POINTS ? ` (at most ${formatCount(MAX_POINTS)} are drawn; every pair is in the CSV)` : ""}.
        </p>
      )}
      {loading && total != null && <p className="hint" aria-busy="true">Reading again…</p>}
      {stat.furthestOff.length > 0 && <FurthestOff pairs={stat.furthestOff} />}
    </div>
  );
}

function FurthestOff({ pairs }: { pairs: readonly Pair[] }) {
  return (
    <>
      <h4>Furthest off</h4>
      <ol className="furthest-off" data-testid="furthest-off">
        {pairs.map((p) => (
          <li key={p.seq}>
            <span className="mono">
              #{p.kernelId} {p.displayName}
            </span>
            {p.representative === true && <span className="tag simulated">simulated</span>}
            {p.representative === false && <span className="tag projected">projected</span>}: simulated {formatValue(p.simulated)},
            measured {formatValue(p.measured)} ({p.errorPct == null ? "measured 0" : formatPct(p.errorPct)})
          </li>
        ))}
      </ol>
    </>
  );
}
