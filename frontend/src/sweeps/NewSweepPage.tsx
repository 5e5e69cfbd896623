import { useMemo, useState, type FormEvent } from "react";
import { useMutation } from "urql";
import { useLiveQuery } from "../api/useLiveQuery";
import { countOf, formatCount } from "../format";
import { Link, navigate, useTitle } from "../router";
import { useReadyTraceChanges } from "../traces/useTraceChanges";
import { LaunchSweepMutation, NewSweepQuery } from "./documents";
import { sweepPath } from "./progress";
import { AxesEditor, axesInput, type AxisDraft } from "./AxesEditor";
import { axisName, gridSize } from "./design";

/** New sweep: pick ready traces and configs; every trace runs under every config. */
export function NewSweepPage() {
  useTitle("New sweep");
  const [{ data, error }, reexecute] = useLiveQuery({ query: NewSweepQuery });
  // A trace that becomes ready joins the list, one that stops being ready or goes leaves it.
  const listed = useMemo(() => (data ? new Set(data.traces.nodes.map((t) => t.id)) : undefined), [data]);
  useReadyTraceChanges(listed, () => reexecute({ requestPolicy: "network-only" }));
  const [traces, setTraces] = useState<ReadonlySet<string>>(new Set());
  const [configs, setConfigs] = useState<ReadonlySet<string>>(new Set());
  const [label, setLabel] = useState("");
  const [rerun, setRerun] = useState(false);
  const [axes, setAxes] = useState<AxisDraft[]>([]);
  const [{ fetching, error: launchError }, launch] = useMutation(LaunchSweepMutation);
  if (error && !data) return <p role="alert" className="error">Could not load traces and configs: {error.message}</p>;
  if (!data) return <p aria-busy="true">Loading…</p>;
  const ready = data.traces.nodes.filter((t) => !t.sample);
  const usable = data.simConfigs.filter((c) => !c.error);
  const axisValues = axesInput(axes);
  const n = traces.size * gridSize(configs.size, axisValues);
  const toggle = (set: ReadonlySet<string>, v: string, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(v);
    else next.delete(v);
    return next;
  };
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (n === 0 || fetching) return;
    // In the order the lists show them.
    const r = await launch({
      input: {
        traceIds: ready.filter((t) => traces.has(t.id)).map((t) => t.id),
        simConfigs: usable.filter((c) => configs.has(c.name)).map((c) => c.name),
        axes: axisValues.length > 0 ? axisValues : null,
        label: label.trim() || null,
        rerun,
      },
    });
    if (r.data) navigate(sweepPath(r.data.launchSweep.id));
  }
  return (
    <section aria-labelledby="newsweep-title">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href="/runs">Runs</Link> / New sweep
      </nav>
      <div className="toolbar">
        <h1 id="newsweep-title">New sweep</h1>
      </div>
      <form onSubmit={submit} aria-label="Launch a sweep">
        <fieldset className="form-row" style={{ maxWidth: 760, border: 0, padding: 0 }}>
          <legend>
            Traces <span className="hint">— {traces.size} of {ready.length} ready traces</span>
          </legend>
          <label>
            <input
              type="checkbox"
              checked={ready.length > 0 && traces.size === ready.length}
              onChange={(e) => setTraces(e.target.checked ? new Set(ready.map((t) => t.id)) : new Set())}
            />{" "}
            All ready traces
          </label>
          {ready.length === 0 ? (
            <p className="muted">No trace is ready.</p>
          ) : (
            <ul className="configs">
              {ready.map((t) => (
                <li key={t.id}>
                  <label>
                    <input type="checkbox" checked={traces.has(t.id)} onChange={(e) => setTraces(toggle(traces, t.id, e.target.checked))} />
                    <span className="mono">{t.id}</span>
                    <span className="hint">
                      {t.model ?? ""} · {t.traceGpuArch} · {formatCount(t.kernelCount)} kernels
                    </span>
                  </label>
                </li>
              ))}
            </ul>
          )}
        </fieldset>
        <fieldset className="form-row" style={{ maxWidth: 760, border: 0, padding: 0 }}>
          <legend>
            Simulator configs <span className="hint">— {configs.size} of {usable.length}</span>
          </legend>
          {usable.length === 0 ? (
            <p className="muted">The server has no usable Accel-Sim configs (CASCADE_SIM_CONFIGS_DIR).</p>
          ) : (
            <ul className="configs">
              {usable.map((c) => (
                <li key={c.name}>
                  <label>
                    <input type="checkbox" checked={configs.has(c.name)} onChange={(e) => setConfigs(toggle(configs, c.name, e.target.checked))} />
                    <span className="mono">{c.name}</span>
                    <span className="hint">
                      cc {c.computeCapability || "?"}
                      {c.coreClockMHz ? ` · ${c.coreClockMHz} MHz` : ""}
                    </span>
                  </label>
                </li>
              ))}
            </ul>
          )}
        </fieldset>
        <AxesEditor axes={axes} onChange={setAxes} />
        <div className="form-row">
          <label htmlFor="sweep-label">Label (optional)</label>
          <input id="sweep-label" value={label} onChange={(e) => setLabel(e.target.value)} />
          <label className="check">
            <input type="checkbox" checked={rerun} onChange={(e) => setRerun(e.target.checked)} data-testid="rerun" />
            Simulate again the runs an identical succeeded run would answer
          </label>
        </div>
        <p data-testid="sweep-size">
          {countOf(traces.size, "trace")} × {countOf(configs.size, "config")}
          {axisValues.map((a) => ` × ${countOf(a.values.length, `${axisName(a)} value`)}`).join("")} = {countOf(n, "run")}
        </p>
        <button type="submit" className="primary" disabled={n === 0 || fetching}>
          {fetching ? "Launching…" : "Launch sweep"}
        </button>
        {launchError && (
          <p role="alert" className="error">
            Could not launch: {launchError.graphQLErrors[0]?.message ?? launchError.message}
          </p>
        )}
      </form>
    </section>
  );
}
