import { useEffect, useState } from "react";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { RUN_STATES, StateBadge } from "../components/StateBadge";
import { formatCount, formatTime } from "../format";
import type { RunState, RunSummaryFragment } from "../gql/graphql";
import { Link, tracePath, useTitle } from "../router";
import { SweepsList } from "../sweeps/SweepsList";
import { sweepPath } from "../sweeps/progress";
import { mergeRun, progressFraction } from "./compare";
import { RunRemovedSubscription, RunsQuery, RunUpdatedSubscription } from "./documents";

const STATES = Object.keys(RUN_STATES) as RunState[];
const PAGE = 100;

export function runPath(id: string): string {
  return `/runs/${encodeURIComponent(id)}`;
}

export function RunsScreen() {
  useTitle("Runs");
  const [state, setState] = useState<RunState | null>(null);
  return (
    <section aria-labelledby="runs-title">
      <div className="toolbar">
        <h1 id="runs-title">Runs</h1>
        <Link href="/sweeps/new" className="button">
          New sweep
        </Link>
        <div className="filters">
          <label>
            State{" "}
            <select
              aria-label="Filter runs by state"
              value={state ?? ""}
              onChange={(e) => setState((e.target.value || null) as RunState | null)}
            >
              <option value="">All</option>
              {STATES.map((s) => (
                <option key={s} value={s}>
                  {RUN_STATES[s].label}
                </option>
              ))}
            </select>
          </label>
        </div>
      </div>
      <SweepsList />
      <h2>All runs</h2>
      <RunList key={state ?? ""} state={state} traceId={null} />
    </section>
  );
}

/** Runs, newest first, kept live by runUpdated. */
export function RunList({ state, traceId }: { state: RunState | null; traceId: string | null }) {
  const [first, setFirst] = useState(PAGE);
  const [{ data, error, fetching }] = useLiveQuery({ query: RunsQuery, variables: { state, traceId, first } });
  const [rows, setRows] = useState<RunSummaryFragment[]>([]);
  useEffect(() => {
    if (data) setRows(data.runs.nodes);
  }, [data]);
  useEvents(RunUpdatedSubscription, { traceId }, (d) => setRows((r) => mergeRun(r, d.runUpdated, state)));
  // A run goes away with its trace's directory.
  useEvents(RunRemovedSubscription, { traceId }, (d) => setRows((r) => r.filter((x) => x.id !== d.runRemoved)));
  if (error && !data) return <p role="alert" className="error">Could not load runs: {error.message}</p>;
  if (!data) return <p aria-busy="true">Loading runs…</p>;
  if (rows.length === 0) return <p className="empty">No runs{state ? " in this state" : " yet"}.</p>;
  return (
    <>
    <table className="traces" aria-label="Runs">
      <thead>
        <tr>
          <th scope="col">State</th>
          <th scope="col">Run</th>
          {!traceId && <th scope="col">Trace</th>}
          <th scope="col">Config</th>
          <th scope="col">Sweep</th>
          <th scope="col">Progress</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => {
          const f = progressFraction(r.progress);
          return (
            <tr key={r.id} data-run-id={r.id} data-state={r.state}>
              <td>
                <StateBadge state={r.state} kind="run" />
              </td>
              <td>
                <Link href={runPath(r.id)} className="trace-id">
                  {r.label || r.id}
                </Link>
                {r.error && <div className="error-text" title={r.error}>{r.error}</div>}
              </td>
              {!traceId && (
                <td>
                  <Link href={tracePath(r.trace.id)}>{r.trace.id}</Link>
                </td>
              )}
              <td className="mono">{r.simConfig.name}</td>
              <td>{r.sweep ? <Link href={sweepPath(r.sweep.id)}>{r.sweep.label || r.sweep.id}</Link> : <span className="muted">—</span>}</td>
              <td>
                {formatCount(r.progress.kernelsDone)} / {formatCount(r.progress.kernelsTotal)}
                {f != null && <span className="muted"> ({Math.round(f * 100)} %)</span>}
              </td>
              <td>
                <time dateTime={r.createdAt}>{formatTime(r.createdAt)}</time>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
    {data.runs.pageInfo.hasNextPage && (
      <button type="button" disabled={fetching} onClick={() => setFirst(first + PAGE)}>
        {fetching ? "Loading…" : "Show more runs"}
      </button>
    )}
    </>
  );
}
