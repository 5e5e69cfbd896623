import { useEffect, useRef, useState } from "react";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { countOf, formatTime } from "../format";
import type { SweepSummaryFragment } from "../gql/graphql";
import { newest } from "../time";
import { Link } from "../router";
import { RunUpdatedSubscription } from "../runs/documents";
import { SweepsQuery, SweepUpdatedSubscription } from "./documents";
import { progressText, sweepActive, sweepPath, type SweepProgress } from "./progress";

const PAGE = 20;

/**
 * The newest sweeps, each a group of runs with its progress, live: each unfinished sweep
 * follows sweepUpdated, and a run of a sweep not listed yet (launched elsewhere) fetches the
 * list again.
 */
export function SweepsList() {
  const [{ data, error }, reexecute] = useLiveQuery({ query: SweepsQuery, variables: { first: PAGE } });
  const known = useRef(new Set<string>());
  useEffect(() => {
    data?.sweeps.nodes.forEach((s) => known.current.add(s.id));
  }, [data]);
  useEvents(RunUpdatedSubscription, { traceId: null }, (d) => {
    const id = d.runUpdated.sweep?.id;
    if (id && !known.current.has(id)) {
      known.current.add(id);
      reexecute({ requestPolicy: "network-only" });
    }
  });
  if (error && !data) return <p role="alert" className="error">Could not load sweeps: {error.message}</p>;
  if (!data || data.sweeps.nodes.length === 0) return null;
  return (
    <section aria-labelledby="sweeps-title">
      <h2 id="sweeps-title">Sweeps</h2>
      <table className="traces" aria-label="Sweeps">
        <thead>
          <tr>
            <th scope="col">Sweep</th>
            <th scope="col">Runs</th>
            <th scope="col">Progress</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {data.sweeps.nodes.map((s) => (
            <SweepRow key={s.id} sweep={s} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

function SweepRow({ sweep }: { sweep: SweepSummaryFragment }) {
  const [progress, setProgress] = useState<SweepProgress>(sweep.progress);
  // The newer of the list's answer and the events, by updatedAt (see newest).
  useEffect(() => setProgress((p) => newest(p, sweep.progress)), [sweep.progress]);
  // A run removed with its trace: the progress without it, whatever its updatedAt.
  useEvents(
    SweepUpdatedSubscription,
    { id: sweep.id },
    (d) => setProgress((p) => (d.sweepUpdated.removedRunId ? d.sweepUpdated.sweep.progress : newest(p, d.sweepUpdated.sweep.progress))),
    !sweepActive(progress),
  );
  return (
    <tr data-sweep-id={sweep.id} data-done={progress.done === progress.total ? "yes" : "no"}>
      <td>
        <Link href={sweepPath(sweep.id)} className="trace-id">
          {sweep.label || sweep.id}
        </Link>
      </td>
      <td>
        {countOf(sweep.traceIds.length, "trace")} × {countOf(sweep.simConfigs.length, "config")}
      </td>
      <td>
        <SweepProgressBar progress={progress} />
      </td>
      <td>
        <time dateTime={sweep.createdAt}>{formatTime(sweep.createdAt)}</time>
      </td>
    </tr>
  );
}

export function SweepProgressBar({ progress }: { progress: SweepProgress }) {
  const text = progressText(progress);
  return (
    <span className="progress">
      <progress max={Math.max(1, progress.total)} value={progress.done} aria-label="Sweep progress" aria-valuetext={text} />
      <span data-testid="sweep-progress-text" className={progress.failed ? "error-text" : undefined}>
        {text}
      </span>
    </span>
  );
}
