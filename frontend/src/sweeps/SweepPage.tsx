import { useEffect, useRef, useState } from "react";
import { useMutation } from "urql";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { useReplayReducer } from "../api/replay";
import { countOf, formatTime } from "../format";
import type { RunSummaryFragment, SweepQuery as SweepData } from "../gql/graphql";
import { newest } from "../time";
import { Link, useTitle } from "../router";
import { formatCorrelation, formatPct, runListReducer, type RunListAction } from "../runs/compare";
import { RunTable } from "../runs/RunTable";
import { SweepGrid } from "../compare/SweepGrid";
import { DesignSpace } from "./DesignSpace";
import { ConfirmButton } from "../components/ConfirmButton";
import { CancelSweepMutation, SweepPageUpdatedSubscription, SweepQuery } from "./documents";
import { sweepActive, type SweepProgress } from "./progress";
import { SweepProgressBar } from "./SweepsList";

const PAGE = 200;

type Comparison = NonNullable<SweepData["sweep"]>["comparison"];

/**
 * A copy of a sweep's comparison, with the updatedAt of the progress it came with in a
 * sweepUpdated message (which reads both together): of two copies, newest() keeps the one read
 * later, as for the progress. A query's answer gives none (see below).
 */
interface ComparisonCopy {
  rows: Comparison;
  updatedAt?: string | null;
}

/**
 * A sweep live: its progress, its runs, and the comparison per config, each from the query's
 * answer and the sweepUpdated events, so the comparison counts a run that succeeded as soon as
 * the progress does (its message brings both).
 */
export function SweepPage({ id }: { id: string }) {
  const [first, setFirst] = useState(PAGE);
  const [{ data, error, fetching }] = useLiveQuery({ query: SweepQuery, variables: { id, first } });
  const [progress, setProgress] = useState<SweepProgress | null>(null);
  // An answer can be older than the events already shown: see useReplayReducer.
  const [rows, dispatch] = useReplayReducer<RunSummaryFragment[], RunListAction<RunSummaryFragment>>(
    (rows, a) => runListReducer(rows, a, null),
    [],
    (a) => a.type === "loaded",
  );
  const [comparison, setComparison] = useState<ComparisonCopy | null>(null);
  // The comparison shown, for the events' callback: see below.
  const shownComparison = useRef<ComparisonCopy | null>(null);
  const takeComparison = (copy: ComparisonCopy) =>
    setComparison((c) => (shownComparison.current = newest(c, copy)));
  useTitle(data?.sweep ? `Sweep ${data.sweep.label || data.sweep.id}` : "Sweep");
  useEffect(() => {
    if (!data?.sweep) return;
    const answered = data.sweep.progress;
    setProgress((p) => newest(p, answered));
    dispatch({ type: "loaded", rows: data.sweep.runs.nodes });
    // The answer's comparison and progress are read concurrently: the comparison may predate
    // the progress it came with, so it carries no time and never wins over a message's copy
    // (each message reads both together; the first one after subscribing brings it).
    takeComparison({ rows: data.sweep.comparison, updatedAt: null });
  }, [data, dispatch]);
  useEvents(SweepPageUpdatedSubscription, { id }, (d) => {
    const { sweep, run, removedRunId, comparison: rows } = d.sweepUpdated;
    if (removedRunId) {
      // A run removed with its trace: the sweep as it is without it, whatever its updatedAt
      // (the latest of the runs left can be earlier than the copy shown).
      if (rows) setComparison((shownComparison.current = { rows, updatedAt: sweep.progress.updatedAt }));
      setProgress(sweep.progress);
      dispatch({ type: "removed", id: removedRunId });
      return;
    }
    // Only the first message and a run's success bring a comparison: the others leave it as it
    // is. A message reads the progress when it is sent, so one sent for an earlier event (a
    // run's last kernel) can count a success whose own message, with the comparison, is still
    // on its way: its progress waits for that message, so that the two never disagree on screen.
    if (rows) {
      takeComparison({ rows, updatedAt: sweep.progress.updatedAt });
      setProgress((p) => newest(p, sweep.progress));
    } else if (sweep.progress.succeeded <= succeededIn(shownComparison.current)) {
      setProgress((p) => newest(p, sweep.progress));
    }
    if (run) dispatch({ type: "updated", run, limit: first });
  });
  if (error && !data) return <p role="alert" className="error">Could not load sweep {id}: {error.message}</p>;
  if (!data) return <p aria-busy="true">Loading sweep…</p>;
  const sweep = data.sweep;
  if (!sweep) return <p>There is no sweep <code>{id}</code>. <Link href="/runs">All runs</Link></p>;
  const p = progress ?? sweep.progress;
  return (
    <section aria-labelledby="sweep-title" className="sweep-page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href="/runs">Runs</Link> / <span>sweep {sweep.id}</span>
      </nav>
      <div className="toolbar">
        <h1 id="sweep-title" className="mono">{sweep.label || sweep.id}</h1>
        {sweepActive(p) && <CancelSweepButton id={sweep.id} notOver={p.queued + p.running} />}
      </div>
      <dl className="facts">
        <dt>Runs</dt>
        <dd>
          {sweep.runCount}: {countOf(sweep.traceIds.length, "trace")} × {countOf(sweep.simConfigs.length, "config")}
        </dd>
        <dt>Configs</dt>
        <dd className="mono">{sweep.simConfigs.join(", ")}</dd>
        {sweep.axes.length > 0 && (
          <>
            <dt>Axes</dt>
            <dd className="mono">
              {sweep.axes.map((a) => `${a.option || "modifiers"}: ${a.values.map((v) => v || "none").join(", ")}`).join(" × ")}
            </dd>
          </>
        )}
        <dt>Executor</dt>
        <dd>{sweep.executor}</dd>
        <dt>Created</dt>
        <dd>{formatTime(sweep.createdAt)}</dd>
      </dl>
      <SweepProgressBar progress={p} />
      {sweep.axes.length > 0 && (
        <>
          <h2>Design space</h2>
          <DesignSpace id={sweep.id} />
        </>
      )}
      <h2>Comparison per config</h2>
      <ComparisonTable rows={comparison?.rows ?? sweep.comparison} />
      <h2>Traces × configs</h2>
      <SweepGrid id={sweep.id} />
      <h2>Runs</h2>
      <RunTable
        of="sweep"
        rows={rows}
        more={sweep.runs.pageInfo.hasNextPage ? { fetching, onMore: () => setFirst(first + PAGE) } : undefined}
      />
    </section>
  );
}

/** How many succeeded runs a comparison counts; no bound before there is one. */
function succeededIn(copy: ComparisonCopy | null): number {
  return copy ? copy.rows.reduce((n, c) => n + c.succeeded, 0) : Number.POSITIVE_INFINITY;
}

function ComparisonTable({ rows }: { rows: Comparison }) {
  if (rows.every((c) => c.succeeded === 0)) return <p className="muted">No run has succeeded yet.</p>;
  return (
    <table className="traces" aria-label="Sweep comparison">
      <thead>
        <tr>
          <th scope="col">Config</th>
          <th scope="col">Succeeded</th>
          <th scope="col">Compared runs</th>
          <th scope="col">Kernels</th>
          <th scope="col">MAPE</th>
          <th scope="col">Correlation</th>
          <th scope="col">Step time error</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((c) => (
          <tr key={c.simConfig} data-config={c.simConfig}>
            <td className="mono">{c.simConfig}</td>
            <td>
              {c.succeeded} of {c.runs}
            </td>
            <td>{c.compared}</td>
            <td>{c.kernelsCompared}</td>
            <td data-testid={`mape-${c.simConfig}`}>{formatPct(c.mape, false)}</td>
            <td data-testid={`correlation-${c.simConfig}`}>{c.kernelsCompared ? formatCorrelation(c.correlation) : "—"}</td>
            <td>{c.stepsCompared ? `${formatPct(c.stepMape, false)} over ${c.stepsCompared} steps` : "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CancelSweepButton({ id, notOver }: { id: string; notOver: number }) {
  const [{ fetching, error }, cancel] = useMutation(CancelSweepMutation);
  const runs = notOver === 1 ? "run not over stops" : `runs not over stop`;
  return (
    <>
      <ConfirmButton
        label="Cancel sweep"
        busyLabel="Cancelling…"
        busy={fetching}
        question="Cancel this sweep?"
        detail={`Its ${notOver} ${runs} (queued ones never start) and cannot be resumed; finished runs keep their results.`}
        confirmLabel="Yes, cancel sweep"
        keepLabel="Keep the sweep"
        onConfirm={() => void cancel({ id })}
      />
      {error && <span role="alert" className="error">Cancel failed: {error.graphQLErrors[0]?.message ?? error.message}</span>}
    </>
  );
}
