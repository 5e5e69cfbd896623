import { useEffect, useRef, useState } from "react";
import { useClient } from "urql";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { useReplayReducer } from "../api/replay";
import { StateBadge, TRACE_STATES } from "../components/StateBadge";
import { formatBytes, formatCount, formatTime } from "../format";
import type { TraceState } from "../gql/graphql";
import { Link, navigate, tracePath, useLocation, useTitle } from "../router";
import { TraceRemovedSubscription, TracesQuery, TraceSummaryQuery, TraceUpdatedSubscription } from "./documents";
import { Removals, traceListReducer, type TraceFilter } from "./merge";
import { DiskUsage } from "./DiskUsage";
import { S3Upload } from "./S3Upload";

const PAGE = 200;
const STATES = Object.keys(TRACE_STATES) as TraceState[];

function useFilterFromUrl(): [TraceFilter, (f: TraceFilter) => void] {
  const { search } = useLocation();
  const p = new URLSearchParams(search);
  const state = STATES.includes(p.get("state") as TraceState) ? (p.get("state") as TraceState) : null;
  const filter = { state, search: p.get("q") ?? "" };
  const set = (f: TraceFilter) => {
    const q = new URLSearchParams();
    if (f.state) q.set("state", f.state);
    if (f.search) q.set("q", f.search);
    const s = q.toString();
    navigate(s ? `/?${s}` : "/", true);
  };
  return [filter, set];
}

export function TracesScreen() {
  useTitle("Traces");
  const [filter, setFilter] = useFilterFromUrl();
  const [text, setText] = useState(filter.search);
  // The search box updates the URL (and so the query) once typing pauses.
  const { state, search } = filter;
  useEffect(() => {
    if (text === search) return;
    const t = setTimeout(() => setFilter({ state, search: text }), 200);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [text, state, search]);
  return (
    <section aria-labelledby="traces-title">
      <div className="toolbar">
        <h1 id="traces-title">Traces</h1>
        <div className="filters" role="search">
          <label>
            State{" "}
            <select
              aria-label="Filter by state"
              value={filter.state ?? ""}
              onChange={(e) => setFilter({ ...filter, state: (e.target.value || null) as TraceState | null })}
            >
              <option value="">All</option>
              {STATES.map((s) => (
                <option key={s} value={s}>
                  {TRACE_STATES[s].label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Search{" "}
            <input
              type="search"
              aria-label="Search by trace id or model"
              placeholder="id or model"
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
          </label>
        </div>
      </div>
      <TraceList key={`${filter.state}|${filter.search}`} filter={filter} />
      <DiskUsage />
    </section>
  );
}

function TraceList({ filter }: { filter: TraceFilter }) {
  const [first, setFirst] = useState(PAGE);
  const [{ data, error, fetching }] = useLiveQuery({
    query: TracesQuery,
    variables: { state: filter.state, search: filter.search || null, first },
  });
  // An answer can be older than the events already shown: see useReplayReducer.
  const [list, dispatch] = useReplayReducer(traceListReducer, { rows: [], filter, delta: 0 }, (a) => a.type === "loaded");
  useEffect(() => {
    if (data) dispatch({ type: "loaded", rows: data.traces.nodes, append: false });
  }, [data]);
  // An update that arrives after its trace's removal is checked with the server (Removals).
  const client = useClient();
  const removals = useRef<Removals | null>(null);
  removals.current ??= new Removals();
  useEvents(TraceUpdatedSubscription, { id: null }, (d) => {
    void removals.current!.updated(
      d.traceUpdated,
      (trace) => dispatch({ type: "updated", trace }),
      async (id) => (await client.query(TraceSummaryQuery, { id }, { requestPolicy: "network-only" }).toPromise()).data?.trace,
    );
  });
  useEvents(TraceRemovedSubscription, {}, (d) => {
    removals.current!.removed(d.traceRemoved);
    dispatch({ type: "removed", id: d.traceRemoved });
  });

  if (error && !data) return <p role="alert" className="error">Could not load traces: {error.message}</p>;
  if (!data) return <p aria-busy="true">Loading traces…</p>;
  const total = data.traces.totalCount + list.delta;
  // Until a trace of the user's own arrives (the seeded sample does not count), say how to
  // upload one.
  const noUploads = !filter.state && !filter.search && list.rows.every((t) => t.sample);
  return (
    <>
      <p className="muted" aria-live="polite">
        {formatCount(total)} {total === 1 ? "trace" : "traces"}
        {filter.state || filter.search ? " match" : ""}
      </p>
      {list.rows.length === 0 ? (
        <p className="empty">
          {filter.state || filter.search
            ? "No trace matches this filter."
            : "No traces yet. A trace appears here as soon as its first file lands in the bucket."}
        </p>
      ) : (
        // Narrower than its columns, the table scrolls sideways whole, its header with its rows.
        <div className="ktable-wrap">
        <table className="traces" aria-label="Traces">
          <thead>
            <tr>
              <th scope="col">State</th>
              <th scope="col">Trace</th>
              <th scope="col">Model</th>
              <th scope="col">Source GPU</th>
              <th scope="col" className="num">Kernels</th>
              <th scope="col" className="num">Size</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.rows.map((t) => (
              <tr key={t.id} data-trace-id={t.id} data-state={t.state}>
                <td>
                  <StateBadge state={t.state} />
                </td>
                <td>
                  <Link href={tracePath(t.id)} className="trace-id">
                    {t.id}
                  </Link>
                  {t.sample && <span className="tag" title="The sample trace cannot start a run">sample</span>}
                  {t.state === "FAILED" && t.error && (
                    <div className="error-text" role="note" aria-label={`Error for ${t.id}`} title={t.error}>
                      {t.error}
                    </div>
                  )}
                </td>
                <td>{t.model ?? <span className="muted">—</span>}</td>
                <td>{t.sourceGpu ?? <span className="muted">—</span>}</td>
                <td className="num" data-field="kernelCount">{formatCount(t.kernelCount)}</td>
                <td className="num" data-field="bytes" title={`${formatCount(t.bytes)} bytes`}>
                  {formatBytes(t.bytes)}
                </td>
                <td>
                  <time dateTime={t.updatedAt}>{formatTime(t.updatedAt)}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
      {data.traces.pageInfo.hasNextPage && (
        <button type="button" disabled={fetching} onClick={() => setFirst(first + PAGE)}>
          {fetching ? "Loading…" : "Show more traces"}
        </button>
      )}
      {noUploads && <S3Upload />}
    </>
  );
}
