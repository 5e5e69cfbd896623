// The plan view's two estimates of what a sampled run of the plan gives: its wall time on this
// server under a config (SamplingPlan.wallEstimate), and its projection checked against a stored
// full run of the trace (SamplingPlan.evaluate), which simulates nothing.
import { useState } from "react";
import { useQuery } from "urql";
import { formatCount, formatTime } from "../format";
import { PlanFullRunsQuery, SamplingEvaluateQuery, SamplingWallEstimateQuery } from "./documents";
import { formatBound, formatRate, formatSeconds, formatSignedFraction, formatSpeedup } from "./figures";

interface ConfigChoice {
  name: string;
  error?: string | null;
}

/** The sampled run's estimated wall time under a config picked here (default: preselected). */
export function WallTimeEstimate({ planId, configs, preselected }: { planId: string; configs: readonly ConfigChoice[]; preselected: string }) {
  const [config, setConfig] = useState(preselected);
  const [{ data, error, fetching }] = useQuery({ query: SamplingWallEstimateQuery, variables: { id: planId, config }, pause: config === "" });
  const e = data?.samplingPlan?.wallEstimate;
  return (
    <section aria-labelledby="wall-title" data-testid="wall-estimate">
      <h3 id="wall-title">Wall time on this server</h3>
      <div className="toolbar">
        <label>
          Config{" "}
          <select value={config} onChange={(ev) => setConfig(ev.target.value)} aria-label="Config to estimate">
            {configs.map((c) => (
              <option key={c.name} value={c.name}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error ? (
        <p role="alert" className="error">
          Could not estimate: {error.graphQLErrors[0]?.message ?? error.message}
        </p>
      ) : fetching && !e ? (
        <p aria-busy="true">Estimating…</p>
      ) : !e ? (
        <p className="muted" data-testid="no-estimate">
          No finished run of {config} on this server to measure the simulator's rate from: run the config once (any trace whose
          kernel list counts instructions), and the estimate follows.
        </p>
      ) : (
        <>
          <div className="stats">
            <div className="stat" data-testid="wall-sampled">
              <div className="v">{formatSeconds(e.seconds)}</div>
              <div className="k">Sampled run ({countText(e.segments, "segment")}, {e.concurrency} at once)</div>
            </div>
            <div className="stat" data-testid="wall-full">
              <div className="v">{formatSeconds(e.fullSeconds)}</div>
              <div className="k">
                Full run{e.measuredFullSeconds != null ? `; one took ${formatSeconds(e.measuredFullSeconds)}` : ""}
              </div>
            </div>
            <div className="stat" data-testid="wall-speedup">
              <div className="v">{formatSpeedup(e.speedup)}</div>
              <div className="k">Faster</div>
            </div>
          </div>
          <p className="hint" data-testid="wall-basis">
            The simulator's rate under {e.config}: {formatRate(e.instructionsPerSecond)}, measured on {countText(e.runs, "recent run")};{" "}
            {e.startupSeconds != null
              ? `start-up ${formatSeconds(e.startupSeconds)} a process (fitted)`
              : "start-up not measured apart (it is in the rate)"}
            . Segments' processes summed: {formatSeconds(e.processSeconds)}. Concurrency: {e.concurrencyNote}.
          </p>
        </>
      )}
    </section>
  );
}

function countText(n: number, noun: string): string {
  return `${formatCount(n)} ${noun}${n === 1 ? "" : "s"}`;
}

/** Evaluate the plan against one of the trace's SUCCEEDED full runs: projected vs full cycles. */
export function EvaluateAgainstFullRun({ planId, traceId }: { planId: string; traceId: string }) {
  const [{ data: runsData, error: runsError }] = useQuery({ query: PlanFullRunsQuery, variables: { traceId }, requestPolicy: "cache-and-network" });
  const full = (runsData?.runs.nodes ?? []).filter((r) => r.sampling == null && (r.kernelIds == null || r.kernelIds.length === 0));
  const [chosen, setChosen] = useState("");
  const [asked, setAsked] = useState<string | null>(null);
  const run = chosen || full[0]?.id || "";
  const [{ data, error, fetching }] = useQuery({ query: SamplingEvaluateQuery, variables: { id: planId, run: asked ?? "" }, pause: asked == null });
  const ev = asked != null ? data?.samplingPlan?.evaluate : undefined;
  return (
    <section aria-labelledby="evaluate-title" data-testid="evaluate">
      <h3 id="evaluate-title">Evaluate against a full run</h3>
      {runsError ? (
        <p role="alert" className="error">Could not list the trace's runs: {runsError.message}</p>
      ) : full.length === 0 ? (
        <p className="muted" data-testid="no-full-run">
          {runsData ? "This trace has no succeeded full run to evaluate the plan against." : "Loading runs…"}
        </p>
      ) : (
        <div className="toolbar">
          <label>
            Full run{" "}
            <select value={run} onChange={(e) => setChosen(e.target.value)} aria-label="Full run to evaluate against">
              {full.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.id} · {r.simConfig.name}
                  {r.label ? ` · ${r.label}` : ""} · {formatTime(r.createdAt)}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={() => setAsked(run)} disabled={run === "" || (fetching && asked === run)}>
            {fetching && asked === run ? "Evaluating…" : "Evaluate"}
          </button>
        </div>
      )}
      <p className="hint">
        What a sampled run of this plan would have projected had each representative simulated as in that run: it simulates nothing,
        and cannot show the error of warm-up.
      </p>
      {error && asked != null && (
        <p role="alert" className="error">
          Could not evaluate: {error.graphQLErrors[0]?.message ?? error.message}
        </p>
      )}
      {ev && (
        <dl className="facts" data-testid="evaluation" data-run={ev.run.id}>
          <dt>Projected cycles</dt>
          <dd data-testid="eval-projected">
            {formatCount(Math.round(ev.projectedCycles))}{" "}
            <span className="muted">
              (95 % interval {formatCount(Math.round(ev.ciLowCycles))} – {formatCount(Math.round(ev.ciHighCycles))})
            </span>
          </dd>
          <dt>Full run's cycles</dt>
          <dd data-testid="eval-full">{formatCount(Math.round(ev.fullCycles))}</dd>
          <dt>Error</dt>
          <dd data-testid="eval-error">
            {formatSignedFraction(ev.error)} <span className="muted">(stated {formatBound(ev.statedError)})</span>
          </dd>
          <dt>Full total</dt>
          <dd data-testid="eval-inside" className={ev.inside ? undefined : "warn"}>
            {ev.inside ? "inside the 95 % interval" : "outside the 95 % interval"}
          </dd>
        </dl>
      )}
    </section>
  );
}
