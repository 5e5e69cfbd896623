import { useEffect, useState } from "react";
import { useEvents } from "../api/useEvents";
import { StateBadge } from "../components/StateBadge";
import { formatCount, formatNs } from "../format";
import type { RunDetailFragment, RunSummaryFragment } from "../gql/graphql";
import { Link, tracePath } from "../router";
import { samplePath } from "./SamplingPage";
import { formatBound, formatCompact, formatFraction, formatSeconds, formatSpeedup, speedup, warmupText } from "./figures";
import { formatPct } from "../runs/compare";
import { RunUpdatedSubscription } from "../runs/documents";
import { runName } from "../runs/runName";
import { runPath } from "../runs/RunTable";
import { stateCounts, withLive } from "./sampled";

type Sampling = NonNullable<RunDetailFragment["sampling"]>;

function cycles(v: number | null | undefined): string {
  return v == null || !Number.isFinite(v) ? "—" : formatCount(Math.round(v));
}

function Stat({ k, v, testid, title }: { k: string; v: React.ReactNode; testid?: string; title?: string }) {
  return (
    <div className="stat" data-testid={testid} title={title}>
      <div className="v">{v}</div>
      <div className="k">{k}</div>
    </div>
  );
}

/**
 * A sampled run's panel: representatives simulated, the simulated fraction, the projection with
 * its interval, simulator time against the full run's estimate, the segments and the validation
 * run (live: the trace's run updates carry their states), and the check against a full run.
 */
export function SampledRunPanel({
  run,
  sampling,
  onFullRunSucceeded,
}: {
  run: Pick<RunDetailFragment, "id" | "state" | "progress" | "trace"> & { simConfig: { name: string } };
  sampling: Sampling;
  /**
   * Told when a run this one can be checked against succeeds while it has no check: the check
   * is computed when the run is read, and that success changes nothing of this run to send.
   */
  onFullRunSucceeded?: () => void;
}) {
  const [live, setLive] = useState<ReadonlyMap<string, RunSummaryFragment>>(new Map());
  // Whether a full run it can be checked against succeeded since the run was last read. Its
  // message can come before or after this run's own success.
  const [fullSucceeded, setFullSucceeded] = useState(false);
  useEvents(RunUpdatedSubscription, { traceId: run.trace.id }, (d) => {
    const r = d.runUpdated;
    if (r.id === run.id) return;
    setLive((m) => new Map(m).set(r.id, r));
    if (checkable(r, run, sampling)) setFullSucceeded(true);
  });
  const waiting = fullSucceeded && run.state === "SUCCEEDED" && sampling.check == null;
  useEffect(() => {
    if (!waiting) return;
    setFullSucceeded(false);
    onFullRunSucceeded?.();
  }, [waiting, onFullRunSucceeded]);
  const segments = withLive(sampling.segments, live);
  const validation = sampling.validationRun ? withLive([sampling.validationRun], live)[0] : null;
  // The full run's time: measured once the validation run has succeeded, else estimated.
  const fullMeasured = validation?.state === "SUCCEEDED" ? validation.figures.wallSeconds : null;
  const fullSeconds = fullMeasured ?? sampling.fullRunSecondsEstimate;
  const x = speedup(fullSeconds, sampling.simulatorSeconds);
  const p = sampling.plan;
  return (
    <section aria-labelledby="sampled-title" className="sampled-panel" data-testid="sampled-panel">
      <h2 id="sampled-title">Sampled simulation</h2>
      <p className="hint">
        Plan <Link href={samplePath(run.trace.id, p.id)}>{p.id}</Link> of <Link href={tracePath(run.trace.id)}>{run.trace.id}</Link>:{" "}
        {p.method}, {formatBound(p.errorBound)}, {formatCount(p.samples)} representatives, warm-up {warmupText(p)} before each. Only the representatives and their warm-up are simulated; every other launch is
        projected from its stratum's representatives.
      </p>
      <div className="stats">
        <Stat
          k="Representatives simulated"
          v={`${formatCount(run.progress.kernelsDone)} / ${formatCount(sampling.representatives)}`}
          testid="sampled-progress"
        />
        <Stat
          k={`Simulated fraction (${formatCount(sampling.simulatedLaunches)} launches, ${formatCompact(sampling.simulatedInstructions)} warp instr.)`}
          v={formatFraction(sampling.simulatedFraction)}
          testid="sampled-fraction"
        />
        <Stat
          k={
            sampling.projectedCycles == null
              ? "Projected total cycles: when every segment has succeeded"
              : `Projected total cycles, 95 % interval ${cycles(sampling.ciLowCycles)} – ${cycles(sampling.ciHighCycles)} (${formatBound(sampling.expectedError)})`
          }
          v={cycles(sampling.projectedCycles)}
          testid="projected-cycles"
        />
        <Stat k="Projected total time" v={formatNs(sampling.projectedNs)} testid="projected-time" />
        <Stat
          k={
            fullMeasured != null
              ? `Simulator time, vs ${formatSeconds(fullMeasured)} the full run took`
              : `Simulator time, vs ${formatSeconds(sampling.fullRunSecondsEstimate)} a full run would take`
          }
          v={
            <>
              {formatSeconds(sampling.simulatorSeconds)}
              {x != null && <span className="good"> {formatSpeedup(x)}</span>}
            </>
          }
          testid="simulator-time"
          title={
            fullMeasured != null
              ? "The validation run's wall time: a full run of this config, measured"
              : "The full run's time is estimated from the segments' seconds per warp instruction over every launch's warp instructions"
          }
        />
      </div>
      <SamplingCheckView check={sampling.check} validation={validation} />
      <details open={segments.length <= 12}>
        <summary data-testid="segments-summary">
          Segments ({formatCount(segments.length)}): {stateCounts(segments) || "none yet"}
        </summary>
        <ul className="segments" aria-label="Segments">
          {segments.map((s) => (
            <li key={s.id} data-testid="segment">
              <Link href={runPath(s.id)} className="mono">
                {runName(s)}
              </Link>{" "}
              <StateBadge state={s.state} kind="run" />{" "}
              <span className="hint">
                {formatCount(s.progress.kernelsDone)} of {formatCount(s.progress.kernelsTotal)} launches
              </span>
            </li>
          ))}
        </ul>
      </details>
    </section>
  );
}

/** Whether r's success can give a sampled run without a check its check, once the sampled run has succeeded: a succeeded full run of its config. */
export function checkable(
  r: Pick<RunSummaryFragment, "id" | "state" | "simConfig">,
  run: { simConfig: { name: string } },
  sampling: Pick<Sampling, "check" | "segments" | "validationRun">,
): boolean {
  if (sampling.check || r.state !== "SUCCEEDED") return false;
  if (r.id === sampling.validationRun?.id) return true;
  return r.simConfig.name === run.simConfig.name && !sampling.segments.some((s) => s.id === r.id);
}

function SamplingCheckView({ check, validation }: { check: Sampling["check"]; validation: RunSummaryFragment | null }) {
  return (
    <>
      <h3>Check against a full run</h3>
      {validation && (
        <p data-testid="validation-run">
          Validation run: <Link href={runPath(validation.id)}>{runName(validation)}</Link> <StateBadge state={validation.state} kind="run" />{" "}
          <span className="hint">
            {formatCount(validation.progress.kernelsDone)} of {formatCount(validation.progress.kernelsTotal)} kernels
          </span>
        </p>
      )}
      {!check ? (
        <p className="muted" data-testid="no-check">
          {validation
            ? "The check appears when the validation run and this run have succeeded."
            : "No full run of this trace and config has succeeded: launch with “Validate against a full run” to check the projection."}
        </p>
      ) : (
        <div data-testid="sampling-check">
          <div className="stats">
            <Stat k={`Total error vs the full run's ${cycles(check.fullCycles)} cycles`} v={formatPct(check.totalErrorPct)} testid="check-total-error" />
            <Stat
              k={
                check.launchLatencyCycles == null
                  ? "Error beyond launch latency (the config's latency is not known)"
                  : `Error beyond the launch latency (${formatCount(check.launchLatencyCycles)} cycles a launch)`
              }
              v={formatPct(check.beyondLatencyErrorPct)}
              testid="check-beyond-latency"
            />
            <Stat
              k="Full result in the 95 % interval"
              v={<span className={check.insideInterval ? "good" : "bad"}>{check.insideInterval ? "✓ inside" : "✕ outside"}</span>}
              testid="check-inside"
            />
            <Stat
              k={`Per-kernel error vs full, MAPE (max ${formatPct(check.maxKernelErrorPct, false)}) over ${formatCount(check.kernelsCompared)} launches`}
              v={formatPct(check.kernelMape, false)}
              testid="check-kernel-mape"
            />
            <Stat
              k="MAPE vs measured: sampled / full"
              v={`${formatPct(check.measuredMape, false)} / ${formatPct(check.fullMeasuredMape, false)}`}
              testid="check-measured-mape"
            />
          </div>
          <p className="hint">
            Checked against <Link href={runPath(check.fullRun.id)}>{check.fullRun.label || check.fullRun.id}</Link>{" "}
            <StateBadge state={check.fullRun.state} kind="run" />.
          </p>
        </div>
      )}
    </>
  );
}
