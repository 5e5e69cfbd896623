import { useState, type FormEvent } from "react";
import { useMutation } from "urql";
import { useLiveQuery } from "../api/useLiveQuery";
import { StateBadge } from "../components/StateBadge";
import { formatCount, formatTime } from "../format";
import type { SamplingMethod, SamplingPlanSummaryFragment } from "../gql/graphql";
import { Link, navigate, tracePath, useLocation, useTitle } from "../router";
import { useTraceStateChanges } from "../traces/useTraceChanges";
import { PlanSamplingMutation, SamplingPageQuery } from "./documents";
import { errorField, formatBound, formatCompact, formatFraction, parseTarget, warmupText, type PlanField, type TargetKind } from "./figures";
import { PlanView } from "./PlanView";
import { UntracedBadge } from "./Untraced";

export function samplePath(traceId: string, planId?: string): string {
  return `${tracePath(traceId)}/sample${planId ? `?plan=${encodeURIComponent(planId)}` : ""}`;
}

/** A trace's sampling page: plan a sampled simulation, the trace's plans, and the one chosen (?plan=). */
export function SamplingPage({ traceId }: { traceId: string }) {
  useTitle(`Sample · ${traceId}`);
  const { search } = useLocation();
  const planId = new URLSearchParams(search).get("plan");
  const [{ data, error }, refetch] = useLiveQuery({ query: SamplingPageQuery, variables: { id: traceId } });
  // A trace that becomes ready (or fails, or is reprocessed) changes what can be planned and
  // launched: read the page again when its state differs from the one read.
  useTraceStateChanges(traceId, data ? (data.trace?.state ?? null) : undefined, () => refetch({ requestPolicy: "network-only" }));
  if (error && !data) return <p role="alert" className="error">Could not load trace {traceId}: {error.message}</p>;
  if (!data) return <p aria-busy="true">Loading…</p>;
  const trace = data.trace;
  if (!trace) return <p>There is no trace <code>{traceId}</code>. <Link href="/">Back to traces</Link></p>;
  const plans = trace.samplingPlans;
  const chosen = planId ?? plans[0]?.id ?? null;
  return (
    <section aria-labelledby="sample-title" className="sampling-page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href="/">Traces</Link> / <Link href={tracePath(trace.id)}>{trace.id}</Link> / Sample
      </nav>
      <div className="toolbar">
        <h1 id="sample-title">Sampled simulation</h1>
        <span className="mono">{trace.id}</span>
        <StateBadge state={trace.state} />
      </div>
      <p className="hint" style={{ maxWidth: "90ch" }}>
        A plan splits the trace's {formatCount(trace.kernelCount)} launches into strata of like launches and picks a few
        representatives of each; a sampled run simulates only those (each after its warm-up launches) and projects every other
        launch from its stratum's, with the error stated at 95 % confidence.
      </p>
      {trace.state !== "READY" ? (
        <p className="error-box" role="alert">
          Plans are made for ready traces; this one is {trace.state.toLowerCase()}.
        </p>
      ) : (
        <PlanForm
          traceId={trace.id}
          hasRealTiming={trace.hasRealTiming}
          onPlanned={(id) => {
            refetch({ requestPolicy: "network-only" });
            navigate(samplePath(trace.id, id), true);
          }}
        />
      )}
      <PlanList traceId={trace.id} plans={plans} chosen={chosen} />
      {chosen && <PlanView key={chosen} planId={chosen} trace={trace} configs={data.simConfigs} />}
    </section>
  );
}

const METHODS: { value: SamplingMethod; label: string; about: string }[] = [
  {
    value: "STEM",
    label: "STEM",
    about: "launches of one name, grid and block, clustered by measured duration; enough samples a cluster for the error bound. Needs real timing.",
  },
  {
    value: "SIEVE",
    label: "SIEVE",
    about: "launches of one name, split by warp instruction count while they vary; one representative a stratum.",
  },
];

function PlanForm({ traceId, hasRealTiming, onPlanned }: { traceId: string; hasRealTiming: boolean; onPlanned: (id: string) => void }) {
  const [method, setMethod] = useState<SamplingMethod | "">("");
  const [kind, setKind] = useState<TargetKind>("error");
  const [targetText, setTargetText] = useState("");
  const [warmupText, setWarmupText] = useState("");
  // The server's default warm-up is a step of the program (planSampling without warmup).
  const [warmupStep, setWarmupStep] = useState(true);
  const [{ fetching }, plan] = useMutation(PlanSamplingMutation);
  const [serverError, setServerError] = useState<{ field: PlanField | null; text: string } | null>(null);
  const target = parseTarget(kind, targetText);
  const warmup = warmupStep ? null : warmupText.trim() === "" ? 1 : Number(warmupText);
  const warmupError = warmup != null && !Number.isInteger(warmup) ? "a whole number of launches" : null;
  const fieldError = (f: PlanField) => (serverError?.field === f ? serverError.text : null);
  const defaultMethod = hasRealTiming ? "STEM" : "SIEVE";

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (target.error || warmupError || fetching) return;
    setServerError(null);
    const r = await plan({ traceId, method: method || null, target: target.target, warmup, warmupStep: warmupStep || null });
    if (r.data) onPlanned(r.data.planSampling.id);
    else if (r.error) setServerError(errorField(r.error.graphQLErrors[0]?.message ?? r.error.message));
  }

  const targetProblem = target.error ?? fieldError("target");
  const warmupProblem = warmupError ?? fieldError("warmup");
  return (
    <form onSubmit={submit} aria-label="Plan a sampled simulation" className="plan-form">
      <h2>New plan</h2>
      <fieldset className="form-row plain" style={{ maxWidth: 760 }} aria-describedby={fieldError("method") ? "method-error" : undefined}>
        <legend>Method</legend>
        <div className="radio-list">
          <label className="check">
            <input type="radio" name="method" value="" checked={method === ""} onChange={() => setMethod("")} />
            Server's default: <strong>{defaultMethod}</strong>
            <span className="hint">
              — {hasRealTiming ? "this trace has real timing, so STEM" : "this trace has no real timing, so SIEVE"}
            </span>
          </label>
          {METHODS.map((m) => (
            <label key={m.value} className="check">
              <input type="radio" name="method" value={m.value} checked={method === m.value} onChange={() => setMethod(m.value)} />
              <strong>{m.label}</strong> <span className="hint">— {m.about}</span>
            </label>
          ))}
        </div>
        {fieldError("method") && (
          <span id="method-error" role="alert" className="error">
            {fieldError("method")}
          </span>
        )}
      </fieldset>
      <fieldset className="form-row plain">
        <legend>Target</legend>
        <div className="toolbar">
          <label className="check">
            <input type="radio" name="target-kind" checked={kind === "error"} onChange={() => setKind("error")} />
            Error bound (%)
          </label>
          <label className="check">
            <input type="radio" name="target-kind" checked={kind === "instructions"} onChange={() => setKind("instructions")} />
            Budget (warp instructions)
          </label>
        </div>
        <input
          aria-label={kind === "error" ? "Error bound in percent" : "Budget in warp instructions"}
          placeholder={kind === "error" ? "1 (the default)" : "e.g. 2,000,000"}
          value={targetText}
          onChange={(e) => {
            setTargetText(e.target.value);
            setServerError(null);
          }}
          aria-invalid={targetProblem ? true : undefined}
          aria-describedby="target-hint"
        />
        <span id="target-hint" className={targetProblem ? "error" : "hint"} role={targetProblem ? "alert" : undefined} data-testid="target-hint">
          {targetProblem ??
            (kind === "error"
              ? "The projected total's relative error at 95 % confidence. Empty: 1 %."
              : "Warp instructions to simulate, warm-up included: the plan of the smallest error bound that fits.")}
        </span>
      </fieldset>
      <div className="form-row">
        <label htmlFor="warmup">Warm-up launches</label>
        <input
          id="warmup"
          inputMode="numeric"
          placeholder="1"
          value={warmupStep ? "" : warmupText}
          disabled={warmupStep}
          onChange={(e) => {
            setWarmupText(e.target.value);
            setServerError(null);
          }}
          aria-invalid={warmupProblem ? true : undefined}
          aria-describedby="warmup-hint"
          style={{ maxWidth: 160 }}
        />
        <span id="warmup-hint" className={warmupProblem ? "error" : "hint"} role={warmupProblem ? "alert" : undefined} data-testid="warmup-hint">
          {warmupProblem ??
            (warmupStep
              ? "A step of the program, the default: uncheck it to give a number of launches instead."
              : "Launches simulated before each representative (0 to 64) so caches are not cold. Empty: 1.")}
        </span>
        <label className="check">
          <input
            type="checkbox"
            checked={warmupStep}
            onChange={(e) => {
              setWarmupStep(e.target.checked);
              setServerError(null);
            }}
          />
          One step of the program (the default)
          <span className="hint">
            — the launches back to where the same kernels repeat (a decode step), so a layer's weights are in the caches: the
            most accurate warm-up (see docs/benchmarks.md), for about twice the simulated instructions.
          </span>
        </label>
      </div>
      <button type="submit" className="primary" disabled={fetching || !!target.error || !!warmupError}>
        {fetching ? "Planning…" : "Plan"}
      </button>
      {serverError && serverError.field == null && (
        <p role="alert" className="error" data-testid="plan-error">
          Could not plan: {serverError.text}
        </p>
      )}
    </form>
  );
}

function targetText(p: SamplingPlanSummaryFragment): string {
  if (p.targetInstructions != null) return `budget ${formatCompact(p.targetInstructions)} warp instr. → ${formatBound(p.errorBound)}`;
  return formatBound(p.targetError ?? p.errorBound);
}

function PlanList({ traceId, plans, chosen }: { traceId: string; plans: readonly SamplingPlanSummaryFragment[]; chosen: string | null }) {
  return (
    <section aria-labelledby="plans-title">
      <h2 id="plans-title">Plans ({plans.length})</h2>
      {plans.length === 0 ? (
        <p className="muted">This trace has no plan yet.</p>
      ) : (
        <table className="traces" aria-label="Sampling plans, newest first">
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Method</th>
              <th scope="col">Target</th>
              <th scope="col" className="num">Warm-up</th>
              <th scope="col" className="num">Samples</th>
              <th scope="col" className="num">Simulated</th>
              <th scope="col" className="num">Expected error</th>
            </tr>
          </thead>
          <tbody>
            {plans.map((p) => (
              <tr key={p.id} className={p.id === chosen ? "selected" : undefined} aria-selected={p.id === chosen} data-testid="plan-row">
                <td>
                  <Link href={samplePath(traceId, p.id)} aria-current={p.id === chosen ? "true" : undefined}>
                    {formatTime(p.createdAt)}
                  </Link>
                </td>
                <td>{p.method}</td>
                <td>
                  {targetText(p)}
                  <UntracedBadge u={p.untraced} />
                </td>
                <td className="num" data-testid="plan-warmup">{warmupText(p)}</td>
                <td className="num">{formatCount(p.samples)}</td>
                <td className="num">{formatFraction(p.simulatedFraction)}</td>
                <td className="num">{formatBound(p.expectedError)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
