import { useState, type FormEvent } from "react";
import { useClient, useMutation, useQuery } from "urql";
import { formatBytes, formatCount, formatDim3, formatNs } from "../format";
import type { SamplingPageQuery as PageData, SamplingPlanDetailFragment } from "../gql/graphql";
import { navigate } from "../router";
import { cannotLaunchReason, pickDefaultConfig } from "../runs/defaultConfig";
import { LaunchRunMutation } from "../runs/documents";
import { runPath } from "../runs/RunTable";
import { SamplingPlanQuery, SamplingTraceListQuery } from "./documents";
import { allocationText, formatBasis, formatBound, formatCompact, formatCost, formatFraction } from "./figures";
import { Representative } from "./Representative";
import { EvaluateAgainstFullRun, WallTimeEstimate } from "./PlanEstimates";
import { StrataChart } from "./StrataChart";
import { UntracedWarning } from "./Untraced";

type Trace = NonNullable<PageData["trace"]>;
type Config = PageData["simConfigs"][number];

/** A plan: its figures, its strata as a chart and a table, its trace list, and Launch sampled run. */
export function PlanView({ planId, trace, configs }: { planId: string; trace: Trace; configs: readonly Config[] }) {
  const [{ data, error }] = useQuery({ query: SamplingPlanQuery, variables: { id: planId } });
  if (error && !data?.samplingPlan) return <p role="alert" className="error">Could not load plan {planId}: {error.graphQLErrors[0]?.message ?? error.message}</p>;
  if (!data?.samplingPlan) return <p aria-busy="true">Loading plan…</p>;
  const p = data.samplingPlan;
  return (
    <section aria-labelledby="plan-title" data-testid="plan-view" data-plan={p.id}>
      <h2 id="plan-title">
        Plan <span className="mono">{p.id}</span>: {p.method}, {formatBound(p.errorBound)}
      </h2>
      <UntracedWarning u={p.untraced} />
      <PlanFigures p={p} />
      <div className="toolbar">
        <DownloadTraceList planId={p.id} traceId={trace.id} configs={configs} />
        <span className="hint">The kernel ranges to trace next time: only these launches, with the NVBit tracer's kernel limits.</span>
      </div>
      <WallTimeEstimate planId={p.id} configs={configs} preselected={preselectedConfig(trace, configs)} />
      <EvaluateAgainstFullRun planId={p.id} traceId={trace.id} />
      <LaunchSampled plan={p} trace={trace} configs={configs} />
      <h3>Strata ({formatCount(p.strata.length)})</h3>
      <StrataChart strata={p.strata} basis={p.basis} />
      <StrataTable p={p} />
    </section>
  );
}

function Stat({ k, v, testid, title }: { k: string; v: string; testid?: string; title?: string }) {
  return (
    <div className="stat" data-testid={testid} title={title}>
      <div className="v">{v}</div>
      <div className="k">{k}</div>
    </div>
  );
}

function PlanFigures({ p }: { p: SamplingPlanDetailFragment }) {
  const basis = p.basis === "DURATION" ? "measured duration" : "warp instructions";
  return (
    <>
      <div className="stats">
        <Stat k="Representatives" v={formatCount(p.samples)} testid="plan-samples" />
        <Stat k={`Launches simulated, of ${formatCount(p.launches)}`} v={formatCount(p.simulatedLaunches)} testid="plan-sim-launches" />
        <Stat
          k={`Warp instructions simulated, of ${formatCompact(p.instructions)}`}
          v={formatCompact(p.simulatedInstructions)}
          testid="plan-sim-insts"
        />
        <Stat k="Simulated fraction" v={formatFraction(p.simulatedFraction)} testid="plan-fraction" />
        <Stat k="Expected error (95 %)" v={formatBound(p.expectedError)} testid="plan-expected-error" />
      </div>
      <dl className="facts" data-testid="plan-facts">
        <dt>Basis</dt>
        <dd>
          {basis}
          {p.untimedLaunches > 0 && (
            <span className="warn">
              {" "}
              ({formatCount(p.untimedLaunches)} launches without a measured duration planned by instruction count, left out of the
              total and the error)
            </span>
          )}
        </dd>
        <dt>Total</dt>
        <dd>{formatBasis(p.total, p.basis)}</dd>
        <dt>Estimate</dt>
        <dd data-testid="plan-estimate">
          {formatBasis(p.estimate, p.basis)}{" "}
          <span className="muted">
            (95 % interval {formatBasis(p.ciLow, p.basis)} – {formatBasis(p.ciHigh, p.basis)}; off the total by{" "}
            {formatFraction(p.total > 0 ? (p.estimate - p.total) / p.total : null)})
          </span>
        </dd>
        <dt>Warm-up</dt>
        <dd>
          {p.warmup === 0 ? "none" : `${p.warmup} launch${p.warmup === 1 ? "" : "es"} before each representative`}
          {p.warmupStep && <span className="muted"> (a step of the program)</span>}
        </dd>
      </dl>
    </>
  );
}

function StrataTable({ p }: { p: SamplingPlanDetailFragment }) {
  return (
    <div className="grid-wrap">
      <table className="traces" aria-label="Strata">
        <thead>
          <tr>
            <th scope="col">Kernel</th>
            <th scope="col">Grid</th>
            <th scope="col">Block</th>
            <th scope="col" className="num">Launches</th>
            <th scope="col" className="num">Mean duration</th>
            <th scope="col" className="num">CV</th>
            <th scope="col" className="num">Mean warp instr.</th>
            <th scope="col">Why</th>
            <th scope="col" className="num" title="Warp instructions its representatives add, warm-up included, less what earlier strata simulate already">
              Cost
            </th>
            <th scope="col" className="num" title="Its share of the variance of the projected total">
              Variance share
            </th>
            <th scope="col">Representatives (launch · kernel id · weight · warm-up)</th>
          </tr>
        </thead>
        <tbody>
          {p.strata.map((s, i) => (
            <tr key={i} data-testid="stratum">
              <td className="mono" title={s.name}>{s.displayName}</td>
              <td className="mono">{s.grid ? formatDim3(s.grid) : <span className="muted">varies</span>}</td>
              <td className="mono">{s.block ? formatDim3(s.block) : <span className="muted">varies</span>}</td>
              <td className="num">{formatCount(s.size)}</td>
              <td className="num">{formatNs(s.meanDurationNs)}</td>
              <td className="num">{(p.basis === "DURATION" ? s.cvDuration : s.cvInstructions)?.toFixed(2) ?? "—"}</td>
              <td className="num">{formatCompact(s.meanInstructions)}</td>
              <td data-testid="stratum-why" data-why={s.why} title={allocationText(s.why, s.allocation).title}>
                {allocationText(s.why, s.allocation).label}
              </td>
              <td className="num" data-testid="stratum-cost">{formatCost(s.cost)}</td>
              <td className="num" data-testid="stratum-variance">{formatFraction(s.varianceShare)}</td>
              <td>
                {s.representatives.map((r) => (
                  <Representative key={r.launch} r={r} planWarmup={p.warmup} />
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DownloadTraceList({ planId, traceId, configs }: { planId: string; traceId: string; configs: readonly Config[] }) {
  const client = useClient();
  const [state, setState] = useState<{ busy: boolean; error: string | null }>({ busy: false, error: null });
  // The launches each segment's L2 warming reads, traced too, make the trace-less trace's sampled
  // run project what the whole trace's does; on kernels of small footprints they are many. How
  // many depends on the L2's size: by default the largest among the server's configs, which
  // serves every config; a smaller L2 (one config's) traces fewer.
  const [warming, setWarming] = useState(true);
  const [l2Of, setL2Of] = useState("");
  const download = async () => {
    setState({ busy: true, error: null });
    const simConfig = warming && l2Of ? l2Of : undefined;
    const r = await client.query(SamplingTraceListQuery, { id: planId, simConfig, warming }, { requestPolicy: "network-only" }).toPromise();
    const text = r.data?.samplingPlan?.traceList;
    if (text == null) {
      setState({ busy: false, error: r.error?.graphQLErrors[0]?.message ?? r.error?.message ?? "no trace list" });
      return;
    }
    const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `${traceId}-plan-${planId}-trace-list.txt`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    setState({ busy: false, error: null });
  };
  return (
    <>
      <button type="button" onClick={() => void download()} disabled={state.busy}>
        {state.busy ? "Preparing…" : "Download trace list"}
      </button>
      <label title="Without them the trace is smaller, and its sampled run warms L2 in part and states a wider interval">
        <input type="checkbox" checked={warming} onChange={(e) => setWarming(e.target.checked)} /> with the launches the L2 warming reads
      </label>
      <label>
        for the L2 of{" "}
        <select value={l2Of} onChange={(e) => setL2Of(e.target.value)} disabled={!warming} aria-label="L2 to trace the warming for">
          <option value="">every config (the largest L2)</option>
          {configs
            .filter((c) => c.error == null)
            .map((c) => (
              <option key={c.name} value={c.name}>
                {c.name} only{c.l2Bytes != null ? ` (L2 ${formatBytes(c.l2Bytes)})` : ""}
              </option>
            ))}
        </select>
      </label>
      {state.error && (
        <span role="alert" className="error">
          Download failed: {state.error}
        </span>
      )}
    </>
  );
}

/** The config a plan's launch and estimate start from: the trace's default, else a compatible one, else the first usable. */
function preselectedConfig(trace: Trace, configs: readonly Config[]): string {
  const compatible = new Set(trace.compatibleSimConfigs.map((c) => c.name));
  return (
    trace.defaultSimConfig?.name ?? pickDefaultConfig(configs.filter((c) => compatible.has(c.name)), trace)?.name ?? configs.find((c) => !c.error)?.name ?? ""
  );
}

function LaunchSampled({ plan, trace, configs }: { plan: SamplingPlanDetailFragment; trace: Trace; configs: readonly Config[] }) {
  const compatible = new Set(trace.compatibleSimConfigs.map((c) => c.name));
  const preselected = preselectedConfig(trace, configs);
  const [choice, setChoice] = useState(preselected);
  const [validate, setValidate] = useState(false);
  const [{ fetching, error }, launch] = useMutation(LaunchRunMutation);
  const reason = cannotLaunchReason(trace);
  const chosen = configs.find((c) => c.name === choice);
  const canLaunch = !reason && chosen != null && !chosen.error && !fetching;

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!canLaunch) return;
    const r = await launch({ input: { traceId: trace.id, simConfig: choice, sampling: { plan: plan.id, validate } } });
    if (r.data) navigate(runPath(r.data.launchRun.id));
  }
  return (
    <form onSubmit={submit} aria-label="Launch a sampled run" className="launch-sampled">
      <h3>Launch sampled run</h3>
      {reason ? (
        <p className="muted" data-testid="cannot-launch">{reason}</p>
      ) : (
        <div className="toolbar">
          <label>
            Config{" "}
            <select value={choice} onChange={(e) => setChoice(e.target.value)} aria-label="Simulator config">
              {configs.map((c) => (
                <option key={c.name} value={c.name} disabled={c.error != null}>
                  {c.name}
                  {c.error ? ` — ${c.error}` : compatible.has(c.name) ? (c.name === preselected ? " (compatible, default)" : " (compatible)") : " (other architecture)"}
                </option>
              ))}
            </select>
          </label>
          <label className="check" style={{ marginTop: 0 }}>
            <input type="checkbox" checked={validate} onChange={(e) => setValidate(e.target.checked)} data-testid="validate" />
            Validate against a full run (a succeeded one of this config, else one launched alongside)
          </label>
          <button type="submit" className="primary" disabled={!canLaunch}>
            {fetching ? "Launching…" : "Launch sampled run"}
          </button>
        </div>
      )}
      <p className="hint">
        Simulates {formatCount(plan.simulatedLaunches)} of {formatCount(plan.launches)} launches ({formatFraction(plan.simulatedFraction)} of the
        warp instructions), in parallel segments.
      </p>
      {error && (
        <p role="alert" className="error">
          Could not launch: {error.graphQLErrors[0]?.message ?? error.message}
        </p>
      )}
    </form>
  );
}
