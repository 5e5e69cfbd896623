import { useEffect, useState } from "react";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { useReplayReducer } from "../api/replay";
import { RUN_STATES } from "../components/StateBadge";
import type { FailureClass, RunState, RunSummaryFragment } from "../gql/graphql";
import { Link, useTitle } from "../router";
import { SweepsList } from "../sweeps/SweepsList";
import { runListReducer, type RunListAction } from "./compare";
import { RunRemovedSubscription, RunsQuery, RunUpdatedSubscription } from "./documents";
import { RunTable } from "./RunTable";
import { FAILURE_CLASSES } from "./stats";

const STATES = Object.keys(RUN_STATES) as RunState[];
const CLASSES = Object.keys(FAILURE_CLASSES) as FailureClass[];
const PAGE = 100;

export function RunsScreen() {
  useTitle("Runs");
  const [state, setState] = useState<RunState | null>(null);
  const [failureClass, setFailureClass] = useState<FailureClass | null>(null);
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
          <label>
            Failure{" "}
            <select
              aria-label="Filter runs by failure class"
              value={failureClass ?? ""}
              onChange={(e) => setFailureClass((e.target.value || null) as FailureClass | null)}
            >
              <option value="">Any</option>
              {CLASSES.map((c) => (
                <option key={c} value={c}>
                  {FAILURE_CLASSES[c]}
                </option>
              ))}
            </select>
          </label>
        </div>
      </div>
      <SweepsList />
      <h2>All runs</h2>
      <RunList key={`${state ?? ""}/${failureClass ?? ""}`} state={state} failureClass={failureClass} traceId={null} />
    </section>
  );
}

/** Runs, newest first, kept live by runUpdated. */
export function RunList({
  state,
  traceId,
  failureClass = null,
}: {
  state: RunState | null;
  traceId: string | null;
  failureClass?: FailureClass | null;
}) {
  const [first, setFirst] = useState(PAGE);
  const [{ data, error, fetching }] = useLiveQuery({ query: RunsQuery, variables: { state, traceId, failureClass, first } });
  // An answer can be older than the events already shown: see useReplayReducer.
  const [rows, dispatch] = useReplayReducer<RunSummaryFragment[], RunListAction<RunSummaryFragment>>(
    (rows, a) => runListReducer(rows, a, state, failureClass),
    [],
    (a) => a.type === "loaded",
  );
  useEffect(() => {
    if (data) dispatch({ type: "loaded", rows: data.runs.nodes });
  }, [data, dispatch]);
  useEvents(RunUpdatedSubscription, { traceId }, (d) => dispatch({ type: "updated", run: d.runUpdated }));
  // A run goes away with its trace's directory.
  useEvents(RunRemovedSubscription, { traceId }, (d) => dispatch({ type: "removed", id: d.runRemoved }));
  if (error && !data) return <p role="alert" className="error">Could not load runs: {error.message}</p>;
  if (!data) return <p aria-busy="true">Loading runs…</p>;
  if (rows.length === 0) return <p className="empty">No runs{state || failureClass ? " match" : " yet"}.</p>;
  return (
    <RunTable
      of={traceId ? "trace" : "all"}
      rows={rows}
      more={data.runs.pageInfo.hasNextPage ? { fetching, onMore: () => setFirst(first + PAGE) } : undefined}
    />
  );
}
