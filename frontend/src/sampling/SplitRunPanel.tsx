import { useState } from "react";
import { useEvents } from "../api/useEvents";
import { StateBadge } from "../components/StateBadge";
import { formatCount } from "../format";
import type { RunDetailFragment, RunSummaryFragment } from "../gql/graphql";
import { Link } from "../router";
import { formatSeconds } from "./figures";
import { RunUpdatedSubscription } from "../runs/documents";
import { runName } from "../runs/runName";
import { runPath } from "../runs/RunTable";
import { stateCounts, withLive } from "./sampled";

type Split = NonNullable<RunDetailFragment["split"]>;

/** The launches segment i gives: "launches 0–99". */
export function segmentLaunches(split: Pick<Split, "segmentStarts" | "launches">, i: number): string {
  const start = split.segmentStarts[i];
  const end = i + 1 < split.segmentStarts.length ? split.segmentStarts[i + 1] : split.launches;
  return start == null ? "" : `launches ${formatCount(start)}–${formatCount(end - 1)}`;
}

/**
 * A split run's panel: how it was cut (segments, warm-up, step), its segments with their launches
 * and states (live: the trace's run updates carry them), and the simulator time they took.
 */
export function SplitRunPanel({ run, split }: { run: Pick<RunDetailFragment, "id" | "trace">; split: Split }) {
  const [live, setLive] = useState<ReadonlyMap<string, RunSummaryFragment>>(new Map());
  useEvents(RunUpdatedSubscription, { traceId: run.trace.id }, (d) => {
    const r = d.runUpdated;
    if (r.id === run.id) return;
    setLive((m) => new Map(m).set(r.id, r));
  });
  const segments = withLive(split.segments, live);
  const done = segments.filter((s) => s.state === "SUCCEEDED").length;
  return (
    <section aria-labelledby="split-title" className="sampled-panel" data-testid="split-panel">
      <h2 id="split-title">Split simulation</h2>
      <p className="hint" data-testid="split-how">
        Every launch simulated, in {formatCount(segments.length)} segments of consecutive launches run in parallel, each but the first
        after {formatCount(split.warmup)} launch{split.warmup === 1 ? "" : "es"} of warm-up (a step of the trace is {formatCount(split.period)}),
        whose results are discarded. When every segment has succeeded, their results are this run&apos;s kernels.
      </p>
      <div className="stats">
        <div className="stat" data-testid="split-progress">
          <div className="v">
            {formatCount(done)} / {formatCount(segments.length)}
          </div>
          <div className="k">Segments succeeded</div>
        </div>
        <div className="stat" data-testid="split-simulator-time">
          <div className="v">{split.simulatorSeconds > 0 ? formatSeconds(split.simulatorSeconds) : "—"}</div>
          <div className="k">Simulator time, the segments' summed</div>
        </div>
      </div>
      <details open={segments.length <= 12}>
        <summary data-testid="split-segments-summary">
          Segments ({formatCount(segments.length)}): {stateCounts(segments) || "none yet"}
        </summary>
        <ul className="segments" aria-label="Segments">
          {segments.map((s, i) => (
            <li key={s.id} data-testid="split-segment">
              <Link href={runPath(s.id)} className="mono">
                {runName(s)}
              </Link>{" "}
              <StateBadge state={s.state} kind="run" /> <span className="hint">{segmentLaunches(split, i)}</span>{" "}
              <span className="hint">
                ({formatCount(s.progress.kernelsDone)} of {formatCount(s.progress.kernelsTotal)} simulated, warm-up included)
              </span>
            </li>
          ))}
        </ul>
      </details>
    </section>
  );
}
