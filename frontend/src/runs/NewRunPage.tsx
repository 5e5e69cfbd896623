import { useRef, useState, type FormEvent } from "react";
import { useMutation } from "urql";
import { useEvents } from "../api/useEvents";
import { useLiveQuery } from "../api/useLiveQuery";
import { StateBadge } from "../components/StateBadge";
import { useTraceStateChanges } from "../traces/useTraceChanges";
import { formatCount } from "../format";
import type { NewRunQuery as NewRunData } from "../gql/graphql";
import { Link, navigate, tracePath, useTitle } from "../router";
import { parseKernelIds } from "./compare";
import { archToComputeCapability, cannotLaunchReason, pickDefaultConfig } from "./defaultConfig";
import { LaunchRunMutation, NewRunQuery, SimConfigsCheckedSubscription } from "./documents";
import { runPath } from "./RunTable";
import { VariantPicker, type Variant } from "./VariantPicker";

type Config = NewRunData["simConfigs"][number];

/** Why a config cannot run this trace, or null when it can: one the server cannot read, or the simulator refuses. */
export function configProblem(c: Config): string | null {
  return c.error ?? null;
}

/**
 * How a usable config that is not compatible relates to the trace: the run simulates the trace
 * on another architecture than it was taken on. Null for a compatible config.
 */
export function crossArchNote(c: Config, compatible: ReadonlySet<string>, traceGpuArch: string): string | null {
  if (c.error || compatible.has(c.name)) return null;
  const want = archToComputeCapability(traceGpuArch) ?? traceGpuArch;
  return `other architecture: simulates the ${traceGpuArch} (${want}) trace on compute capability ${c.computeCapability || "unknown"}`;
}

export function NewRunPage({ traceId }: { traceId: string }) {
  useTitle(`New run · ${traceId}`);
  const [{ data, error }, reexecute] = useLiveQuery({ query: NewRunQuery, variables: { id: traceId } });
  // The server asks the simulator, once at start, which configs it accepts and which binary
  // versions it decodes: until it has, query again when it says it has.
  const unchecked = data?.simConfigs.some((c) => !c.checked) ?? false;
  const uncheckedNow = useRef(unchecked);
  uncheckedNow.current = unchecked;
  useEvents(SimConfigsCheckedSubscription, {}, (d) => {
    if (d.simConfigsChecked && uncheckedNow.current) reexecute({ requestPolicy: "network-only" });
  });
  // A trace that becomes ready enables Launch; one that starts over or goes disables it.
  useTraceStateChanges(traceId, data ? (data.trace?.state ?? null) : undefined, () => reexecute({ requestPolicy: "network-only" }));
  if (error && !data) return <p role="alert" className="error">Could not load trace {traceId}: {error.message}</p>;
  if (!data) return <p aria-busy="true">Loading…</p>;
  if (!data.trace) return <p>There is no trace <code>{traceId}</code>. <Link href="/">Back to traces</Link></p>;
  return (
    <>
      {unchecked && (
        <p className="hint" role="status" data-testid="configs-unchecked">
          Asking the simulator which configs it accepts…
        </p>
      )}
      <NewRunForm trace={data.trace} configs={data.simConfigs} />
    </>
  );
}

function NewRunForm({ trace, configs }: { trace: NonNullable<NewRunData["trace"]>; configs: Config[] }) {
  const compatible = new Set(trace.compatibleSimConfigs.map((c) => c.name));
  const preselected =
    trace.defaultSimConfig?.name ??
    pickDefaultConfig(
      configs.filter((c) => compatible.has(c.name)),
      trace,
    )?.name ??
    null;
  const [choice, setChoice] = useState<string | null>(preselected);
  const [kernelText, setKernelText] = useState("");
  const [label, setLabel] = useState("");
  const [rerun, setRerun] = useState(false);
  const [variant, setVariant] = useState<Variant | null>(null);
  const [{ fetching, error }, launch] = useMutation(LaunchRunMutation);
  const reason = cannotLaunchReason(trace);
  const kernels = parseKernelIds(kernelText);
  const chosen = configs.find((c) => c.name === choice);
  const variantOK = variant == null || (variant.problem == null && !variant.checking);
  const canLaunch = !reason && chosen != null && !configProblem(chosen) && !kernels.error && !fetching && variantOK;
  const chosenCross = chosen ? crossArchNote(chosen, compatible, trace.traceGpuArch) : null;

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!canLaunch || choice == null) return;
    const r = await launch({
      input: {
        traceId: trace.id,
        simConfig: variant?.name ?? choice,
        params: variant && variant.params.length > 0 ? variant.params : null,
        kernelIds: kernels.ids,
        label: label.trim() || null,
        rerun,
      },
    });
    if (r.data) navigate(runPath(r.data.launchRun.id));
  }

  return (
    <section aria-labelledby="newrun-title">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href="/">Traces</Link> / <Link href={tracePath(trace.id)}>{trace.id}</Link> / New run
      </nav>
      <div className="toolbar">
        <h1 id="newrun-title">New run</h1>
        <span className="mono">{trace.id}</span>
        <StateBadge state={trace.state} />
      </div>
      {reason && (
        <p className="error-box" role="alert" data-testid="cannot-launch">
          {reason}
        </p>
      )}
      <form onSubmit={submit} aria-label="Launch a run">
        <fieldset className="form-row" style={{ maxWidth: 760, border: 0, padding: 0 }}>
          <legend>
            Simulator config <span className="hint">— the trace is {trace.traceGpuArch}</span>
          </legend>
          {configs.length === 0 ? (
            <p className="muted">The server has no Accel-Sim configs (CASCADE_SIM_CONFIGS_DIR).</p>
          ) : (
            <ul className="configs">
              {configs.map((c) => {
                const problem = configProblem(c);
                const cross = crossArchNote(c, compatible, trace.traceGpuArch);
                return (
                  <li key={c.name}>
                    <label className={problem ? "off" : ""}>
                      <input
                        type="radio"
                        name="config"
                        value={c.name}
                        checked={choice === c.name}
                        disabled={problem != null}
                        onChange={() => setChoice(c.name)}
                      />
                      <span className="mono">{c.name}</span>
                      <span className="hint">
                        cc {c.computeCapability || "?"}
                        {c.coreClockMHz ? ` · ${c.coreClockMHz} MHz` : ""}
                      </span>
                      {problem ? (
                        <span className="bad">✕ {problem}</span>
                      ) : cross ? (
                        <span className="warn" data-testid={`cross-arch-${c.name}`}>⇄ {cross}</span>
                      ) : (
                        <span className="good">✓ compatible{c.name === preselected ? " · default" : ""}</span>
                      )}
                    </label>
                  </li>
                );
              })}
            </ul>
          )}
          {!reason && configs.length > 0 && compatible.size === 0 && (
            <p className="hint" role="note">
              No config is of the trace's architecture ({trace.traceGpuArch}); any other simulates it on that
              config's architecture.
            </p>
          )}
          {chosen && chosenCross && (
            <p className="note" role="note" data-testid="cross-arch-choice">
              Cross-architecture run: the trace was taken on {trace.traceGpuArch}; {chosen.name} simulates it as
              compute capability {chosen.computeCapability || "unknown"} would run it. The simulator decodes the trace's
              instructions and times them under {chosen.name}'s model: it answers how this workload would run on that GPU.
            </p>
          )}
        </fieldset>
        {chosen && !configProblem(chosen) && (
          <VariantPicker key={chosen.name} base={chosen.name} onChange={setVariant} />
        )}
        <div className="form-row">
          <label htmlFor="kernel-ids">Kernels (optional)</label>
          <input
            id="kernel-ids"
            aria-describedby="kernel-ids-hint"
            placeholder="every kernel"
            value={kernelText}
            onChange={(e) => setKernelText(e.target.value)}
            aria-invalid={kernels.error ? true : undefined}
          />
          <span id="kernel-ids-hint" className={kernels.error ? "error" : "hint"}>
            {kernels.error ??
              (kernels.ids
                ? `${formatCount(kernels.ids.length)} of ${formatCount(trace.kernelCount)} kernels`
                : `${trace.kernelCount === 1 ? "Its one kernel" : `All ${formatCount(trace.kernelCount)} kernels`}. Or ids and ranges: 1-10, 15`)}
          </span>
        </div>
        <div className="form-row">
          <label htmlFor="run-label">Label (optional)</label>
          <input id="run-label" value={label} onChange={(e) => setLabel(e.target.value)} />
          <label className="check">
            <input type="checkbox" checked={rerun} onChange={(e) => setRerun(e.target.checked)} data-testid="rerun" />
            Simulate again even if an identical run (same trace, config, simulator and kernels) succeeded
          </label>
        </div>
        <button type="submit" className="primary" disabled={!canLaunch}>
          {fetching ? "Launching…" : "Launch run"}
        </button>
        {error && (
          <p role="alert" className="error">
            Could not launch: {error.graphQLErrors[0]?.message ?? error.message}
          </p>
        )}
      </form>
    </section>
  );
}
