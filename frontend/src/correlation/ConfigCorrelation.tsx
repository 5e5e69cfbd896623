import { useCallback, useEffect, useRef } from "react";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { DownloadCsv } from "../components/DownloadCsv";
import { useRefetchOnTraceRunState } from "../compare/liveStates";
import { formatCount } from "../format";
import { Link } from "../router";
import { runPath } from "../runs/RunTable";
import { TraceChangedSubscription, TraceCorrelationQuery } from "./documents";
import { formatPearson, formatRanked } from "./figures";

/**
 * The trace's configs against its hardware counters: a row per statistic, a column per
 * config, each cell the figure configs are ranked by on that statistic (MAPE or NRMSE, as the
 * correlator's legends give them), the best per statistic highlighted and the best over all
 * named; where a profile is of another GPU than a config models, that config says so. Shown
 * when the trace has a profile. Live: read again when a run of the trace changes state or
 * the trace changes.
 */
export function ConfigCorrelation({ traceId }: { traceId: string }) {
  const [{ data, error }, reexecute] = useLiveQuery({ query: TraceCorrelationQuery, variables: { id: traceId } });
  const refetch = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  const known = useRef(new Map<string, string>()).current;
  useRefetchOnTraceRunState(traceId, known, refetch);
  const seen = useRef<string | undefined>(undefined);
  seen.current = data?.trace?.updatedAt;
  useEvents(TraceChangedSubscription, { id: traceId }, (d) => {
    if (d.traceUpdated.updatedAt !== seen.current) refetch();
  });
  useEffect(() => {
    for (const r of data?.trace?.configCorrelation.runs ?? []) if (r) known.set(r.id, r.state);
  }, [data, known]);

  if (error && !data) return <p role="alert" className="error">Could not read the hardware counters&apos; figures: {error.message}</p>;
  const trace = data?.trace;
  if (!trace || trace.profiles.length === 0) return null;
  const c = trace.configCorrelation;
  const warned = c.gpuWarnings.map((w) => w.length > 0);
  return (
    <section aria-labelledby="cc-title" data-testid="config-correlation">
      <h2 id="cc-title">Hardware counters per config</h2>
      <p className="hint">
        Each config&apos;s run set against the trace&apos;s hardware profiles ({trace.profiles.map((p) => p.file).join(", ")}), statistic by
        statistic: MAPE for cycles, instructions and IPC, NRMSE for the others, as Accel-Sim&apos;s correlator ranks them (less is
        better; Pearson&apos;s r beneath).
      </p>
      {c.statistics.length === 0 ? (
        <p className="muted">No config&apos;s run has a statistic the profiles measured yet.</p>
      ) : (
        <>
          <p data-testid="correlation-best">
            {c.best ? (
              <>
                Best match over all statistics (least mean rank): <strong className="mono">{c.best}</strong>
              </>
            ) : (
              <span className="muted">No statistic ranks two configs yet.</span>
            )}
          </p>
          {/* Narrower than its columns, the table scrolls sideways whole, its header with its rows. */}
          <div className="ktable-wrap">
          <table className="traces compare correlation" aria-label="Statistics × configs">
            <thead>
              <tr>
                <th scope="col">Statistic</th>
                <th scope="col">Ranked by</th>
                {c.simConfigs.map((cfg, i) => (
                  <th key={cfg} scope="col" className="num mono" data-config={cfg}>
                    {cfg}
                    {cfg === c.best && <span className="tag">best</span>}
                    {c.runs[i]?.sampling && (
                      <span className="tag" data-testid={`corr-sampled-${cfg}`} title="A sampled run: its projections are correlated too; a full run of the config is used when there is one">
                        sampled
                      </span>
                    )}
                    {warned[i] && (
                      <div className="warn-line" data-testid={`gpu-warning-${cfg}`}>
                        ⚠ another GPU
                      </div>
                    )}
                    <div className="muted">{c.runs[i] ? <Link href={runPath(c.runs[i]!.id)}>{c.runs[i]!.id}</Link> : "no succeeded run"}</div>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {c.statistics.map((s) => (
                <tr key={s.statistic} data-stat={s.statistic}>
                  <th scope="row" className="mono">
                    {s.statistic} <span className="muted">{s.unit}</span>
                  </th>
                  <td>{s.rankedBy}</td>
                  {s.configs.map((f, i) => {
                    const cfg = c.simConfigs[i];
                    const best = s.best === cfg;
                    return (
                      <td key={cfg} className={`num${best ? " best" : ""}`} data-testid={`corr-${s.statistic}-${cfg}`} data-best={best || undefined}>
                        {f ? (
                          <>
                            <span data-figure="ranked">{formatRanked(f, s.rankedBy)}</span>
                            {best && <span className="tag">best</span>}
                            <div className="muted" title={`Pearson's r over ${formatCount(f.kernels)} kernels`}>
                              r {formatPearson(f.pearson)} · {formatCount(f.kernels)} {f.kernels === 1 ? "kernel" : "kernels"}
                            </div>
                          </>
                        ) : (
                          <span className="muted" title="No succeeded run of this config, or no pair of this statistic">—</span>
                        )}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
          </div>
          {warned.some(Boolean) && (
            <div className="note warnings" role="note" data-testid="config-gpu-warnings">
              <strong>Another GPU:</strong> these configs&apos; figures set two different GPUs side by side.
              <ul>
                {c.simConfigs.flatMap((cfg, i) => c.gpuWarnings[i].map((w, j) => <li key={`${cfg}-${j}`}><span className="mono">{cfg}</span>: {w}</li>))}
              </ul>
            </div>
          )}
        </>
      )}
      <div className="toolbar">
        <DownloadCsv url={`/traces/${encodeURIComponent(traceId)}/correlation.csv`} filename={`trace-${traceId}-correlation.csv`} label="Download figures per config (CSV)" />
      </div>
    </section>
  );
}
