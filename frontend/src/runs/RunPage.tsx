import { useEffect, useRef, useState } from "react";
import { useMutation } from "urql";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { ConfirmButton } from "../components/ConfirmButton";
import { StateBadge } from "../components/StateBadge";
import { formatCount, formatDurationMs, formatNs, formatTime } from "../format";
import type { RunDetailFragment, RunKernelRowFragment } from "../gql/graphql";
import { sweepPath } from "../sweeps/progress";
import { Link, tracePath, useTitle } from "../router";
import { compareTime, newest } from "../time";
import { appendLines } from "../traces/PostprocessLog";
import { formatCorrelation, formatPct, isActive, progressFraction } from "./compare";
import { CancelRunMutation, RunDetailUpdatedSubscription, RunLogSubscription, RunQuery, RunRemovedSubscription } from "./documents";
import { kernelSubset } from "./kernelSubset";
import { RunKernelsTable } from "./RunKernelsTable";
import { runName } from "./runName";
import { runPath } from "./RunTable";
import { SampledRunPanel } from "../sampling/SampledRunPanel";
import { SplitRunPanel } from "../sampling/SplitRunPanel";
import { runRow } from "./runRow";
import { timingProblems } from "./timingProblems";
import { useReadAgain } from "./useReadAgain";
import { ScatterChart } from "./ScatterChart";
import { CyclesChart } from "./CyclesChart";
import { DownloadKernelsCsv, FailureDetails, RunFiguresList, StatColumnPicker, usePickedColumns } from "./RunStats";
import { pickedColumns } from "./stats";
import { useRunKernels } from "./useRunKernels";
import { HardwareCounters } from "../correlation/HardwareCounters";
import { TraceChangedSubscription } from "../correlation/documents";

export function RunPage({ id }: { id: string }) {
  const [{ data, error, fetching }, refetch] = useLiveQuery({ query: RunQuery, variables: { id } });
  // The newer of the query's answer and the last runUpdated event, by updatedAt: an answer
  // (a refetch after a reconnect) can come after a newer event.
  const [live, setLive] = useState<RunDetailFragment | null>(null);
  useEvents(RunDetailUpdatedSubscription, { id }, (d) => setLive(d.runUpdated));
  const run = newest<RunDetailFragment>(data?.run, live);
  useTitle(`Run ${run ? runName(run) : id}`);
  const [removed, setRemoved] = useState(false);
  const [picked, setPicked] = usePickedColumns();
  useEvents(RunRemovedSubscription, { id }, () => setRemoved(true));
  // A sampled run's check is computed when it is read: when a full run it can be checked
  // against succeeds, read it again, and let that answer win over the last event of the
  // same version (which has no check).
  const readAgain = useReadAgain(data, fetching, refetch, (d) =>
    setLive((l) => (l && d.run && compareTime(l.updatedAt, d.run.updatedAt) <= 0 ? null : l)),
  );
  // Measured timing or a step timeline uploaded after the run (the guide: hasStepTimeline can
  // turn true once the trace is ready) changes its comparison and steps, computed when the run
  // is read: read it again when its trace changes.
  useEvents(TraceChangedSubscription, { id: run?.trace.id ?? "" }, readAgain, !run);
  const shown = useRef<RunDetailFragment | null>(null);
  if (run) shown.current = run;
  const finished = run && !isActive(run.state);
  const queriedActive = data?.run ? isActive(data.run.state) : false;
  // The kernels by pages: no runUpdated message carries them. Read again from the first page
  // when the run ends or its check appears (rows read may have changed then).
  const kernels = useRunKernels(
    id,
    // Each runUpdated is a new version: kernels are stored without the progress moving.
    run?.updatedAt ?? "",
    run?.statTotals,
    `${run?.state ?? ""}|${run?.sampling?.check != null}`,
  );
  useEffect(() => {
    // The log tail is only in the query: fetch it once the run ends.
    if (finished && queriedActive) refetch({ requestPolicy: "network-only" });
  }, [finished, queriedActive, refetch]);

  if (removed && shown.current) {
    // Said with the run as it was last shown: a read after its removal finds no run.
    return (
      <section>
        <h1>Run removed</h1>
        <p role="alert" data-testid="run-removed">
          Run <code>{id}</code> was removed with its trace&apos;s directory ({shown.current.trace.id}); its simulator was stopped.{" "}
          <Link href="/runs">All runs</Link>
        </p>
      </section>
    );
  }
  if (error && !data) return <p role="alert" className="error">Could not load run {id}: {error.message}</p>;
  if (!data) return <p aria-busy="true">Loading run…</p>;
  if (!run) return <p>There is no run <code>{id}</code>. <Link href="/runs">All runs</Link></p>;
  const f = progressFraction(run.progress);
  // A sampled run's progress counts its representatives, a split run's its launches.
  const unit = run.sampling ? "representatives" : run.split ? "launches" : "kernels";
  // The totals come with every update: they follow the kernels stored while the run runs.
  const totals = run.statTotals;
  const started = run.startedAt ? Date.parse(run.startedAt) : null;
  const ended = run.finishedAt ? Date.parse(run.finishedAt) : null;
  return (
    <section aria-labelledby="run-title" className="run-page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href="/runs">Runs</Link> / <span>{run.id}</span>
      </nav>
      <div className="toolbar">
        <h1 id="run-title" className="mono">{runName(run)}</h1>
        <StateBadge state={run.state} kind="run" />
        {isActive(run.state) && <CancelButton id={run.id} />}
      </div>
      {run.sampledBy?.split && (
        <p className="note" role="note" data-testid="sampled-by">
          A segment of the split run <Link href={runPath(run.sampledBy.id)}>{run.sampledBy.label || run.sampledBy.id}</Link>: it
          simulates some of its trace&apos;s consecutive launches (after a warm-up) for that run&apos;s kernels.
        </p>
      )}
      {run.sampledBy && !run.sampledBy.split && (
        <p className="note" role="note" data-testid="sampled-by">
          A segment of the sampled run <Link href={runPath(run.sampledBy.id)}>{run.sampledBy.label || run.sampledBy.id}</Link>: it
          simulates a few of its trace&apos;s launches (warm-up, then representatives) for that run&apos;s projection.
        </p>
      )}
      {run.sameAs && (
        <p className="note" role="status" data-testid="same-as">
          Not simulated again: an identical run (same trace content, config files, simulator and kernels) had
          succeeded, so this one holds its results: <Link href={runPath(run.sameAs.id)}>{run.sameAs.id}</Link>.
          Launch with “Simulate again” to rerun.
        </p>
      )}
      {run.state === "QUEUED" && run.slurm?.reason && (
        <p className="note" role="status" data-testid="slurm-pending">
          Waiting in Slurm&apos;s queue as job {run.slurm.ref}: {run.slurm.reason}
        </p>
      )}
      {(run.state === "FAILED" || run.state === "CANCELLED") && run.error && (
        <div className="error-box" role="alert">
          <strong>{run.state === "FAILED" ? "Failed:" : "Cancelled:"}</strong> {run.error}
          {run.state === "FAILED" && <FailureDetails failureClass={run.failureClass} line={run.failureLine} />}
        </div>
      )}
      {run.crossArchitecture && (
        <p className="note" role="note" data-testid="cross-arch">
          Cross-architecture run: the trace was taken on {run.trace.traceGpuArch}
          {run.trace.sourceGpu ? ` (${run.trace.sourceGpu})` : ""}; this run simulates it on {run.simConfig.name}, compute
          capability {run.simConfig.computeCapability}. Its times say how the workload would run on that GPU; measured
          times, when shown, come from the GPU the trace was taken on.
        </p>
      )}
      {run.simConfig.error && (
        <p className="note" role="note" data-testid="config-problem">
          Config {run.simConfig.name}: {run.simConfig.error}.{" "}
          {run.figures.coreClockMHz
            ? `This run's results use the core clock recorded when it ran (${run.figures.coreClockMHz} MHz), so they are as they were.`
            : "The run's core clock was not recorded when it ran, so its simulated times cannot be computed."}
        </p>
      )}
      <dl className="facts">
        <dt>Trace</dt>
        <dd>
          <Link href={tracePath(run.trace.id)}>{run.trace.id}</Link> {run.trace.model && <span className="muted">({run.trace.model})</span>}
        </dd>
        <dt>Config</dt>
        <dd className="mono">
          {run.simConfig.name} <span className="muted">{configFacts(run)}</span>
        </dd>
        {run.simConfig.base && (
          <>
            <dt>Overrides</dt>
            <dd className="mono" data-testid="run-overrides">
              {run.simConfig.params.map((p) => `${p.option} ${p.value}${p.from ? ` (${p.from})` : ""}`).join(", ")}
              <span className="muted"> on {run.simConfig.base}, as recorded at launch</span>
            </dd>
          </>
        )}
        <dt>Kernels</dt>
        <dd data-testid="run-kernels">{kernelSubset(data.run?.kernelIds, data.run?.kernelContexts)}</dd>
        {run.sweep && (
          <>
            <dt>Sweep</dt>
            <dd>
              <Link href={sweepPath(run.sweep.id)}>{run.sweep.label || run.sweep.id}</Link>
            </dd>
          </>
        )}
        <dt>Executor</dt>
        <dd>{run.executor}</dd>
        {run.slurm && (
          <>
            <dt>Slurm job</dt>
            <dd className="mono" data-testid="slurm-job">
              {run.slurm.ref} <span className="muted">{run.slurm.state}{run.slurm.reason ? ` (${run.slurm.reason})` : ""}</span>
            </dd>
            <dt>Partition</dt>
            <dd className="mono" data-testid="slurm-partition">{run.slurm.partition ?? "—"}</dd>
            <dt>Node</dt>
            <dd className="mono" data-testid="slurm-node">{run.slurm.node ?? "not started yet"}</dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{formatTime(run.createdAt)}</dd>
        <dt>Started</dt>
        <dd>{formatTime(run.startedAt)}</dd>
        <dt>Finished</dt>
        <dd>
          {formatTime(run.finishedAt)}
          {started != null && ended != null && <span className="muted"> (took {formatDurationMs(ended - started)})</span>}
        </dd>
      </dl>
      <div className="progress">
        <progress
          max={Math.max(1, run.progress.kernelsTotal)}
          value={run.progress.kernelsDone}
          aria-label="Simulation progress"
          aria-valuetext={`${run.progress.kernelsDone} of ${run.progress.kernelsTotal} ${unit}`}
        />
        <span data-testid="progress-text">
          {formatCount(run.progress.kernelsDone)} of {formatCount(run.progress.kernelsTotal)} {unit}
          {f != null && ` (${Math.round(f * 100)} %)`}
        </span>
      </div>
      {run.sampling && <SampledRunPanel run={run} sampling={run.sampling} onFullRunSucceeded={readAgain} />}
      {run.split && <SplitRunPanel run={run} split={run.split} />}
      <RunFiguresList figures={run.figures} counters={run.statCounters} totals={totals} />
      {run.history.length > 0 && (
        <details>
          <summary>History ({run.history.length})</summary>
          <ul>
            {run.history.map((h, i) => (
              <li key={i}>{h}</li>
            ))}
          </ul>
        </details>
      )}
      <Comparison run={run} kernels={kernels.rows} kernelTotal={kernels.total} over={!isActive(run.state)} />
      <HardwareCounters runId={run.id} state={run.state} changed={run.updatedAt} />
      <section aria-labelledby="rk-title">
        <h2 id="rk-title">Kernels</h2>
        <div className="toolbar">
          <StatColumnPicker counters={run.statCounters} picked={picked} onChange={setPicked} totals={totals} kernels={kernels.total ?? 0} />
          {(kernels.total ?? 0) > 0 && <DownloadKernelsCsv id={run.id} />}
        </div>
        {kernels.error && (
          <p role="alert" className="error">
            Could not read the run&apos;s kernels: {kernels.error}
          </p>
        )}
        <RunKernelsTable
          kernels={kernels.rows}
          total={kernels.total}
          onNearEnd={kernels.loadMore}
          columns={pickedColumns(run.statCounters, picked)}
          // Once every page is read, the totals of the kernels shown (as they were when the
          // last page was asked for); the run's latest before.
          totals={kernels.more ? totals : kernels.totals}
          sampled={run.sampling ? { checked: run.sampling.check != null } : null}
          run={runRow(run.statCounters, kernels.more ? totals : kernels.totals, run.figures.coreClockMHz ?? run.simConfig.coreClockMHz, run.comparison)}
        />
      </section>
      {run.statCounters.length > 0 && (
        <section aria-labelledby="cycles-title">
          <h2 id="cycles-title">Where the cycles went</h2>
          <CyclesChart
            counters={run.statCounters}
            kernels={kernels.rows.map((k) => ({ label: `#${k.kernelId} ${k.displayName}`, statValues: k.statValues }))}
            totals={totals}
            total={kernels.total ?? 0}
          />
        </section>
      )}
      <section aria-labelledby="log-title">
        <h2 id="log-title">Simulator log</h2>
        {isActive(run.state) ? <LiveRunLog id={run.id} /> : <StaticRunLog lines={data.run?.logTail ?? []} />}
      </section>
    </section>
  );
}

function Stat({ k, v, testid }: { k: string; v: string; testid?: string }) {
  return (
    <div className="stat" data-testid={testid}>
      <div className="v">{v}</div>
      <div className="k">{k}</div>
    </div>
  );
}

/**
 * What the config line says: its compute capability (while the config is
 * there) and the core clock the run's times are at, the recorded one first.
 */
function configFacts(run: Pick<RunDetailFragment, "simConfig" | "figures">): string {
  const parts: string[] = [];
  if (run.simConfig.computeCapability) parts.push(`cc ${run.simConfig.computeCapability}`);
  const mhz = run.figures.coreClockMHz ?? run.simConfig.coreClockMHz;
  if (mhz) parts.push(`${mhz} MHz`);
  return parts.join(", ");
}

/** MAPE, correlation, totals, the scatter and the projected step times. */
export function Comparison({
  run,
  kernels,
  kernelTotal = kernels.length,
  over = true,
}: {
  run: Pick<RunDetailFragment, "comparison" | "steps" | "timingProblems" | "trace">;
  /** The run's kernels read so far: the scatter's points. */
  kernels: readonly RunKernelRowFragment[];
  /** The run's kernels, read or not. */
  kernelTotal?: number | null;
  /** Whether the run is over: only then is a missing comparison for good. */
  over?: boolean;
}) {
  const c = run.comparison;
  const { problems, note } = timingProblems(run.timingProblems, over);
  return (
    <section aria-labelledby="cmp-title">
      <h2 id="cmp-title">Simulated vs measured</h2>
      {!c ? (
        <p className="muted">
          {!run.trace.hasRealTiming
            ? "The trace has no real timing, so there is nothing to compare with."
            : over && problems.length > 0
              ? "No kernel could be compared: see the timing problems below."
              : "No kernel has been compared yet."}
        </p>
      ) : (
        <>
          <div className="stats">
            <Stat k="MAPE" v={formatPct(c.mape, false)} testid="mape" />
            <Stat k="Correlation (Pearson)" v={formatCorrelation(c.correlation)} testid="correlation" />
            <Stat k="Kernels compared" v={formatCount(c.kernelsCompared)} />
            <Stat k="Simulated total" v={formatNs(c.simTotalNs)} />
            <Stat k="Measured total" v={formatNs(c.measuredTotalNs)} />
          </div>
          <ScatterChart kernels={kernels} />
          {kernels.length < (kernelTotal ?? 0) && (
            <p className="hint" data-testid="scatter-partial">
              The first {formatCount(kernels.length)} of {formatCount(kernelTotal ?? 0)} kernels: scroll the kernels table to
              read more.
            </p>
          )}
        </>
      )}
      {note && (
        <p className="hint" data-testid="steps-so-far">
          {note}
        </p>
      )}
      {problems.length > 0 && (
        <div className="warnings" data-testid="timing-problems">
          <h3>Timing problems ({problems.length})</h3>
          <ul>
            {problems.map((p, i) => (
              <li key={i}>{p}</li>
            ))}
          </ul>
        </div>
      )}
      {run.steps.length > 0 && (
        <>
          <h3>Projected step times</h3>
          <table className="traces" aria-label="Projected step times" style={{ maxWidth: 640 }}>
            <thead>
              <tr>
                <th scope="col" className="num">Step</th>
                <th scope="col" className="num">Measured</th>
                <th scope="col" className="num">Projected</th>
                <th scope="col" className="num">Difference</th>
              </tr>
            </thead>
            <tbody>
              {run.steps.map((s) => (
                <tr key={s.step}>
                  <td className="num">{s.step}</td>
                  <td className="num">{formatNs(s.measuredNs)}</td>
                  <td className="num">{formatNs(s.projectedNs)}</td>
                  <td className="num">{formatPct(s.measuredNs > 0 ? (100 * (s.projectedNs - s.measuredNs)) / s.measuredNs : null)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function LiveRunLog({ id }: { id: string }) {
  const [lines, setLines] = useState<string[]>([]);
  useEvents(RunLogSubscription, { id }, (d) => setLines((p) => appendLines(p, d.runLog.lines)), false, () => setLines([]));
  return <StaticRunLog lines={lines} live />;
}

function StaticRunLog({ lines, live = false }: { lines: readonly string[]; live?: boolean }) {
  return (
    <pre className="log" aria-label={live ? "Simulator log, live" : "Simulator log, last lines"} tabIndex={0}>
      {lines.length ? lines.join("\n") : "(no output yet)"}
    </pre>
  );
}

function CancelButton({ id }: { id: string }) {
  const [{ fetching, error }, cancel] = useMutation(CancelRunMutation);
  return (
    <>
      <ConfirmButton
        label="Cancel run"
        busyLabel="Cancelling…"
        busy={fetching}
        question="Cancel this run?"
        detail="Its simulation stops where it is and cannot be resumed; only a new run starts it again."
        confirmLabel="Yes, cancel run"
        keepLabel="Keep running"
        onConfirm={() => void cancel({ id })}
      />
      {error && <span role="alert" className="error">Cancel failed: {error.graphQLErrors[0]?.message ?? error.message}</span>}
    </>
  );
}
