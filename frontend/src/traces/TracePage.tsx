import { useEffect, useState } from "react";
import { useMutation } from "urql";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { StateBadge } from "../components/StateBadge";
import { formatBytes, formatCount, formatTime } from "../format";
import type { TraceDetailFragment } from "../gql/graphql";
import { Link, useTitle } from "../router";
import { newest } from "../time";
import { TraceRuns } from "../runs/TraceRuns";
import { RetryTraceMutation, TraceDetailUpdatedSubscription, TraceQuery, TraceRemovedSubscription } from "./documents";
import { DeleteTrace } from "./DeleteTrace";
import { Kernels } from "./KernelTable";
import { LivePostprocessLog, StaticLog } from "./PostprocessLog";

export function TracePage({ id }: { id: string }) {
  useTitle(id);
  const [{ data, error }, refetch] = useLiveQuery({ query: TraceQuery, variables: { id } });
  const [live, setLive] = useState<TraceDetailFragment | null>(null);
  const [removed, setRemoved] = useState(false);
  useEvents(TraceDetailUpdatedSubscription, { id }, (d) => {
    setLive(d.traceUpdated);
    setRemoved(false);
  });
  useEvents(TraceRemovedSubscription, {}, (d) => d.traceRemoved === id && setRemoved(true));
  const trace = newest(data?.trace, live);

  // The kernel list fills in when the trace becomes ready, and a trace the query did not find
  // yet may appear: fetch again when the live state differs from the queried one.
  const state = trace?.state;
  const queriedState = data ? (data.trace?.state ?? null) : undefined;
  useEffect(() => {
    if (state && queriedState !== undefined && state !== queriedState) refetch({ requestPolicy: "network-only" });
  }, [state, queriedState, refetch]);

  if (error && !data) return <p role="alert" className="error">Could not load trace {id}: {error.message}</p>;
  if (!data) return <p aria-busy="true">Loading trace…</p>;
  if (!trace) {
    return (
      <section>
        <h1>Trace not found</h1>
        <p>
          There is no trace <code>{id}</code> in the bucket. <Link href="/">Back to traces</Link>
        </p>
      </section>
    );
  }
  const kernelTotal = data.trace?.kernels.totalCount ?? 0;
  return (
    <section aria-labelledby="trace-title" className="trace-page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href="/">Traces</Link> / <span>{trace.id}</span>
      </nav>
      <div className="toolbar">
        <h1 id="trace-title" className="mono">{trace.id}</h1>
        <StateBadge state={trace.state} />
        {trace.sample && <span className="tag">sample</span>}
        {trace.state === "FAILED" && trace.retryable && <RetryButton id={trace.id} />}
        {trace.state === "FAILED" && !trace.retryable && (
          <span className="muted" data-testid="fix-metadata">
            Upload a corrected metadata.json: the trace starts over by itself.
          </span>
        )}
        {!trace.sample && !removed && <DeleteTrace id={trace.id} />}
      </div>
      {removed && (
        <p className="error-box" role="alert">
          This trace's directory has left the bucket. What is shown is what it was.
        </p>
      )}
      {trace.state === "FAILED" && trace.error && (
        <p className="error-box" role="alert">
          <strong>Failed:</strong> {trace.error}
        </p>
      )}
      <TraceFacts trace={trace} />
      {trace.warnings.length > 0 && (
        <section aria-labelledby="warnings-title" className="warnings">
          <h2 id="warnings-title">Warnings ({trace.warnings.length})</h2>
          <ul>
            {trace.warnings.map((w, i) => (
              <li key={i}>{w}</li>
            ))}
          </ul>
        </section>
      )}
      {(trace.state === "PROCESSING" || trace.state === "FAILED") && (
        <section aria-labelledby="log-title">
          <h2 id="log-title">Post-processing log</h2>
          {trace.state === "PROCESSING" ? (
            <LivePostprocessLog traceId={trace.id} />
          ) : trace.postprocessLogTail.length > 0 ? (
            <StaticLog lines={trace.postprocessLogTail} label="Post-processing log, last lines" />
          ) : (
            <p className="muted">The post-processor did not run for this trace.</p>
          )}
        </section>
      )}
      <section aria-labelledby="kernels-title">
        <h2 id="kernels-title">Kernels</h2>
        {trace.state === "READY" || kernelTotal > 0 ? (
          kernelTotal > 0 ? (
            <Kernels key={`${trace.id}|${kernelTotal}`} traceId={trace.id} total={kernelTotal} />
          ) : (
            <p className="muted">This trace lists no kernels.</p>
          )
        ) : (
          <p className="muted">
            The kernel list fills in when the trace becomes ready
            {trace.state === "UPLOADING" ? ` (${formatCount(trace.kernelCount)} raw kernel ${trace.kernelCount === 1 ? "trace" : "traces"} so far).` : "."}
          </p>
        )}
      </section>
      <TraceRuns trace={trace} />
    </section>
  );
}

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children ?? <span className="muted">—</span>}</dd>
    </>
  );
}

function YesNo({ value, yes, no }: { value: boolean; yes: string; no: string }) {
  return (
    <span className={value ? "yes" : "no"}>
      <span aria-hidden="true">{value ? "✓ " : "– "}</span>
      {value ? yes : no}
    </span>
  );
}

function TraceFacts({ trace }: { trace: TraceDetailFragment }) {
  return (
    <dl className="facts">
      <Fact label="Model">{trace.model}</Fact>
      <Fact label="Layers">{trace.layers}</Fact>
      <Fact label="Source GPU">{trace.sourceGpu}</Fact>
      <Fact label="Trace GPU arch">
        {trace.traceGpuArch}{" "}
        <span className={trace.traceGpuArchFrom.startsWith("assumed") ? "warn" : "muted"} data-testid="arch-from">
          ({trace.traceGpuArchFrom.startsWith("assumed") ? "assumed: neither metadata.json nor the kernel traces say" : "from " + trace.traceGpuArchFrom})
        </span>
      </Fact>
      <Fact label="Suggested config">
        {trace.suggestedSimConfig ?? <span className="muted">none (New run preselects the first compatible config)</span>}
      </Fact>
      <Fact label="Kernels">
        {formatCount(trace.kernelCount)}
        {trace.untracedKernels > 0 && (
          <span className="muted" data-testid="untraced-count">
            {" "}traced, and {formatCount(trace.untracedKernels)} launches the tracer counted without tracing (a trace taken with a
            sampling plan's traceList: simulate it with a sampled run of that plan)
          </span>
        )}
      </Fact>
      <Fact label="Disk size">
        <span title={`${formatCount(trace.bytes)} bytes`}>{formatBytes(trace.bytes)}</span>
      </Fact>
      <Fact label="Measured times">
        <YesNo
          value={trace.measuredTimesFrom != null}
          yes={trace.hasRealTiming ? "real timing" : "from its hardware profiles"}
          no="not available: no real timing, and no profile with launch durations"
        />
        {trace.measuredTimesFrom && (
          <span className="muted" data-testid="measured-from">
            {" "}({trace.measuredTimesFrom})
          </span>
        )}
      </Fact>
      {trace.profiles.length > 0 && (
        <Fact label="Hardware profiles">
          <ul className="profiles" data-testid="trace-profiles">
            {trace.profiles.map((p) => (
              <li key={p.file}>
                <code>{p.file}</code>{" "}
                {p.error ? (
                  <span className="error">not read: {p.error}</span>
                ) : (
                  <span className="muted">
                    {p.profiler ?? "?"}
                    {p.gpu ? `, ${p.gpu}` : ""}: {formatCount(p.matched)} of {formatCount(p.launches)} launches matched
                  </span>
                )}
              </li>
            ))}
          </ul>
        </Fact>
      )}
      <Fact label="Step timeline">
        <YesNo value={trace.hasStepTimeline} yes="available" no="not available" />
      </Fact>
      <Fact label="Created">{formatTime(trace.createdAt)}</Fact>
      <Fact label="Updated">{formatTime(trace.updatedAt)}</Fact>
      <Fact label="Prompts">
        {trace.prompts.length ? (
          <ol className="prompts">
            {trace.prompts.map((p, i) => (
              <li key={i}>{p}</li>
            ))}
          </ol>
        ) : null}
      </Fact>
    </dl>
  );
}

function RetryButton({ id }: { id: string }) {
  const [{ fetching, error }, retry] = useMutation(RetryTraceMutation);
  return (
    <>
      <button type="button" className="primary" disabled={fetching} onClick={() => retry({ id })}>
        {fetching ? "Retrying…" : "Retry"}
      </button>
      {error && (
        <span role="alert" className="error">
          Retry failed: {error.graphQLErrors[0]?.message ?? error.message}
        </span>
      )}
    </>
  );
}
