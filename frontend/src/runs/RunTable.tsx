import { StateBadge } from "../components/StateBadge";
import { formatCount, formatDurationMs, formatTime } from "../format";
import type { RunSummaryFragment } from "../gql/graphql";
import { Link, tracePath } from "../router";
import { sweepPath } from "../sweeps/progress";
import { progressFraction } from "./compare";
import { runName } from "./runName";
import { FAILURE_CLASSES } from "./stats";

export function runPath(id: string): string {
  return `/runs/${encodeURIComponent(id)}`;
}

/**
 * A table of runs, one row each (data-run-id, data-state), and Show more runs when there are
 * more. What it lists decides its columns: every run ("all"), one trace's ("trace": no trace
 * column), or one sweep's ("sweep": runs named by id, their label being the sweep's and their
 * trace and config in columns of their own, kernel counts plain, no sweep or created column).
 * Elsewhere a run of a sweep is named by label, trace and config (runName). Each row shows the
 * run's total simulated cycles and the simulator's wall time, both recorded on the run (its
 * figures): a list reads no run's kernels. A sampled run is marked "sampled", its cycles "≈".
 */
export function RunTable({
  of,
  rows,
  more,
}: {
  of: "all" | "trace" | "sweep";
  rows: RunSummaryFragment[];
  more?: { fetching: boolean; onMore: () => void };
}) {
  const inSweep = of === "sweep";
  return (
    <>
      {/* Narrower than its columns, the table scrolls sideways whole, its header with its rows. */}
      <div className="ktable-wrap">
      <table className="traces" aria-label={inSweep ? "Sweep runs" : "Runs"}>
        <thead>
          <tr>
            <th scope="col">State</th>
            <th scope="col">Run</th>
            {of !== "trace" && <th scope="col">Trace</th>}
            <th scope="col">Config</th>
            {!inSweep && <th scope="col">Sweep</th>}
            <th scope="col">{inSweep ? "Kernels" : "Progress"}</th>
            <th scope="col" title="Total simulated cycles of the run's kernels, once it succeeded; ≈ a sampled run's, projected from its representatives">
              Cycles
            </th>
            <th scope="col" title="The simulator's wall time">
              Wall time
            </th>
            {!inSweep && <th scope="col">Created</th>}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-run-id={r.id} data-state={r.state}>
              <td>
                <StateBadge state={r.state} kind="run" />
              </td>
              <td>
                <Link href={runPath(r.id)} className="trace-id">
                  {inSweep ? r.id : runName(r)}
                </Link>
                {r.sampling && (
                  <span className="tag sampled" data-testid="sampled-run" title={`A sampled run: ${formatCount(r.sampling.representatives)} representative launches simulated, the others projected from them`}>
                    sampled
                  </span>
                )}
                {r.state === "FAILED" && r.failureClass && (
                  <span className="tag failure-class" title="Failure class">
                    {FAILURE_CLASSES[r.failureClass] ?? r.failureClass}
                  </span>
                )}
                {r.error && <div className="error-text" title={r.error}>{r.error}</div>}
              </td>
              {of !== "trace" && (
                <td>
                  <Link href={tracePath(r.trace.id)}>{r.trace.id}</Link>
                </td>
              )}
              <td className="mono">{r.simConfig.name}</td>
              {!inSweep && (
                <td>{r.sweep ? <Link href={sweepPath(r.sweep.id)}>{r.sweep.label || r.sweep.id}</Link> : <span className="muted">—</span>}</td>
              )}
              <td>{inSweep && r.progress.kernelsTotal > 0 ? `${r.progress.kernelsDone} / ${r.progress.kernelsTotal}` : <Progress run={r} />}</td>
              <td className="num">
                <Cycles run={r} />
              </td>
              <td className="num">{r.figures.wallSeconds == null ? <span className="muted">—</span> : formatDurationMs(r.figures.wallSeconds * 1000)}</td>
              {!inSweep && (
                <td>
                  <time dateTime={r.createdAt}>{formatTime(r.createdAt)}</time>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      </div>
      {more && (
        <button type="button" disabled={more.fetching} onClick={more.onMore}>
          {more.fetching ? "Loading…" : "Show more runs"}
        </button>
      )}
    </>
  );
}

/** The run's total simulated cycles; a sampled run's are projected: "≈ 1,234,567". */
function Cycles({ run }: { run: RunSummaryFragment }) {
  const c = run.figures.simCycles;
  if (c == null) return <span className="muted">—</span>;
  if (!run.sampling) return <span data-testid="run-cycles">{formatCount(c)}</span>;
  return (
    <span data-testid="run-cycles" data-projected="true" title="Projected from the sampled run's representatives">
      ≈ {formatCount(c)}
    </span>
  );
}

function Progress({ run }: { run: RunSummaryFragment }) {
  // Its kernels are counted when it starts: a queued run has none yet.
  if (run.progress.kernelsTotal === 0 && run.progress.kernelsDone === 0) return <span className="muted">—</span>;
  const f = progressFraction(run.progress);
  return (
    <>
      {formatCount(run.progress.kernelsDone)} / {formatCount(run.progress.kernelsTotal)}
      {f != null && <span className="muted"> ({Math.round(f * 100)} %)</span>}
    </>
  );
}
