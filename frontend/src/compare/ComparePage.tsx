import { useCallback, useEffect, useRef, useState } from "react";
import { useClient } from "urql";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useLiveQuery } from "../api/useLiveQuery";
import { formatCount, formatNs } from "../format";
import type { CompareKernelsQuery as KernelsData, ConfigComparisonRowFragment } from "../gql/graphql";
import { Link, tracePath, useTitle } from "../router";
import { formatCorrelation, formatPct } from "../runs/compare";
import { KernelName } from "../components/KernelName";
import { CompareConfigsQuery, CompareKernelsQuery } from "./documents";
import { best, byMape, runsKey, succeededOf } from "./figures";
import { KernelErrorChart } from "./KernelErrorChart";
import { SimulatedTable } from "./SimulatedTable";
import { simulatedNs } from "./simulated";
import { useRefetchOnTraceRunState } from "./liveStates";
import { ConfigCorrelation } from "../correlation/ConfigCorrelation";

/**
 * A trace's runs side by side, config by config: each config's figures (from its latest
 * succeeded run, with how many of its runs succeeded), a MAPE chart, and each kernel's error
 * under each config. Live: a run of the trace that changes state refetches it.
 */
export function ComparePage({ id }: { id: string }) {
  const [{ data, error }, reexecute] = useLiveQuery({ query: CompareConfigsQuery, variables: { id } });
  const known = useRef(new Map<string, string>()).current;
  const refetch = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  useRefetchOnTraceRunState(id, known, refetch);
  useTitle(`Compare configs · ${id}`);
  useEffect(() => {
    for (const c of data?.trace?.configComparison ?? []) if (c.run) known.set(c.run.id, c.run.state);
  }, [data, known]);
  if (error && !data) return <p role="alert" className="error">Could not load trace {id}: {error.message}</p>;
  if (!data) return <p aria-busy="true">Loading comparison…</p>;
  const trace = data.trace;
  if (!trace) return <p>There is no trace <code>{id}</code>. <Link href="/">All traces</Link></p>;
  const rows = trace.configComparison;
  return (
    <section aria-labelledby="compare-title" className="compare-page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link href="/">Traces</Link> / <Link href={tracePath(id)}>{id}</Link> / <span>compare configs</span>
      </nav>
      <h1 id="compare-title">Compare configs</h1>
      {!trace.hasRealTiming && (
        <p className="muted">
          This trace has no real timing: the configs are compared on what the simulator gave, not against measured times.
        </p>
      )}
      {rows.length === 0 ? (
        <p className="muted">This trace has no runs yet.</p>
      ) : (
        <>
          <ConfigTable rows={rows} />
          <h2>What the simulator gave</h2>
          <SimulatedTable traceId={id} rows={rows} />
          {trace.hasRealTiming && (
            <>
              <h2>MAPE per config</h2>
              <MapeBars rows={rows} />
            </>
          )}
          <ConfigCorrelation traceId={id} />
          <h2>{trace.hasRealTiming ? "Error per kernel" : "Cycles per kernel"}</h2>
          <KernelErrors key={runsKey(rows)} traceId={id} measured={trace.hasRealTiming} />
        </>
      )}
    </section>
  );
}

type Row = ConfigComparisonRowFragment;


function counts(c: Row): string {
  const rest = [
    c.failed && `${c.failed} failed`,
    c.cancelled && `${c.cancelled} cancelled`,
    c.running && `${c.running} running`,
    c.queued && `${c.queued} queued`,
  ].filter(Boolean);
  return rest.length ? `${succeededOf(c)} (${rest.join(", ")})` : succeededOf(c);
}

/** The configs' figures, sortable by MAPE, the best match highlighted. */
function ConfigTable({ rows }: { rows: readonly Row[] }) {
  const [desc, setDesc] = useState(false);
  const top = best(rows);
  // Narrower than its columns, the table scrolls sideways whole, its header with its rows.
  return (
    <div className="ktable-wrap">
    <table className="traces compare" aria-label="Configs compared">
      <thead>
        <tr>
          <th scope="col">Config</th>
          <th scope="col">Runs</th>
          <th scope="col">Run used</th>
          <th scope="col">Kernels</th>
          <th scope="col" aria-sort={desc ? "descending" : "ascending"}>
            <button type="button" className="link" onClick={() => setDesc(!desc)} title="Sort by MAPE">
              MAPE {desc ? "▼" : "▲"}
            </button>
          </th>
          <th scope="col">Correlation</th>
          <th scope="col">Simulated total</th>
          <th scope="col">Measured total</th>
        </tr>
      </thead>
      <tbody>
        {byMape(rows, desc).map((c) => (
          <tr key={c.simConfig} data-config={c.simConfig} className={c.simConfig === top ? "best" : undefined}>
            <td className="mono">
              {c.simConfig}
              {c.simConfig === top && <span className="tag" title="Lowest MAPE">best match</span>}
            </td>
            <td data-testid={`counts-${c.simConfig}`}>{counts(c)}</td>
            <td className="mono">
              {c.run ? <Link href={`/runs/${encodeURIComponent(c.run.id)}`}>{c.run.id}</Link> : "—"}
              {c.sampled && (
                <span className="tag" data-testid={`sampled-${c.simConfig}`} title="A sampled run: its kernels are projected from its representatives; a full run of the config is used when there is one">
                  sampled
                </span>
              )}
            </td>
            <td>{c.comparison ? formatCount(c.comparison.kernelsCompared) : "—"}</td>
            <td data-testid={`mape-${c.simConfig}`}>{formatPct(c.comparison?.mape, false)}</td>
            <td data-testid={`correlation-${c.simConfig}`}>{c.comparison ? formatCorrelation(c.comparison.correlation) : "—"}</td>
            <td data-testid={`simtotal-${c.simConfig}`}>{formatNs(c.comparison?.simTotalNs ?? simulatedNs(c))}</td>
            <td>{formatNs(c.comparison?.measuredTotalNs)}</td>
          </tr>
        ))}
      </tbody>
    </table>
    </div>
  );
}

const BAR_H = 26;
const LABEL_W = 220;
const CHART_W = 640;

/** A bar per config of its MAPE, best first; a config without figures says why instead. */
function MapeBars({ rows }: { rows: readonly Row[] }) {
  const sorted = byMape(rows);
  const max = Math.max(1, ...sorted.map((c) => c.comparison?.mape ?? 0));
  const plot = CHART_W - LABEL_W - 140;
  return (
    <svg role="img" aria-label="MAPE per config" data-testid="mape-chart" width={CHART_W} height={sorted.length * BAR_H + 8} className="mape-chart">
      {sorted.map((c, i) => {
        const y = 4 + i * BAR_H;
        const w = c.comparison ? Math.max(2, (plot * c.comparison.mape) / max) : 0;
        return (
          <g key={c.simConfig} data-config={c.simConfig}>
            <text x={LABEL_W - 8} y={y + BAR_H / 2 + 4} textAnchor="end" fontSize="12">{c.simConfig}</text>
            {c.comparison && <rect x={LABEL_W} y={y + 4} width={w} height={BAR_H - 8} fill="var(--accent, #3b82f6)" />}
            <text x={LABEL_W + w + 6} y={y + BAR_H / 2 + 4} fontSize="12">
              {c.comparison ? formatPct(c.comparison.mape, false) : `no figures: ${succeededOf(c)}`}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

const PAGE = 500;
const ROW = 30;
type KernelRow = NonNullable<KernelsData["trace"]>["configComparisonKernels"]["nodes"][number];

/**
 * Each kernel's error per config (its simulated cycles when the trace has no measured timing),
 * virtualised; pages load as the scroll nears their end.
 */
function KernelErrors({ traceId, measured }: { traceId: string; measured: boolean }) {
  const client = useClient();
  const [rows, setRows] = useState<KernelRow[]>([]);
  const [configs, setConfigs] = useState<string[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const next = useRef<{ after: string | null; more: boolean; loading: boolean }>({ after: null, more: true, loading: false });
  const load = useCallback(() => {
    const n = next.current;
    if (!n.more || n.loading) return;
    n.loading = true;
    void client
      .query(CompareKernelsQuery, { id: traceId, first: PAGE, after: n.after }, { requestPolicy: "network-only" })
      .toPromise()
      .then((r) => {
        n.loading = false;
        const c = r.data?.trace?.configComparisonKernels;
        if (!c) {
          setFailed(r.error?.message ?? "no answer");
          n.more = false;
          return;
        }
        n.after = c.pageInfo.endCursor ?? null;
        n.more = c.pageInfo.hasNextPage;
        setConfigs(c.simConfigs);
        setTotal(c.totalCount);
        setRows((rs) => [...rs, ...c.nodes]);
      });
  }, [client, traceId]);
  useEffect(load, [load]);
  const scroller = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 15 });
  const items = v.getVirtualItems();
  const last = items[items.length - 1]?.index ?? 0;
  useEffect(() => {
    if (rows.length > 0 && last > rows.length - 100) load();
  }, [last, rows.length, load]);
  if (failed) return <p role="alert" className="error">Could not load kernels: {failed}</p>;
  if (total === null) return <p aria-busy="true">Loading kernels…</p>;
  if (total === 0) return <p className="muted">No run of this trace has simulated a kernel yet.</p>;
  const grid = { gridTemplateColumns: `70px minmax(220px, 1fr) ${"110px ".repeat(configs.length)}` };
  return (
    <div className="ktable-wrap">
      {measured && <KernelErrorChart rows={rows} configs={configs} total={total} />}
      <div role="table" aria-label={measured ? "Kernel errors per config" : "Kernel cycles per config"} aria-rowcount={total + 1} className="ktable">
        <div role="rowgroup">
          <div role="row" aria-rowindex={1} className="rkrow khead" style={grid}>
            <span role="columnheader">Kernel</span>
            <span role="columnheader">Name</span>
            {configs.map((c) => (
              <span key={c} role="columnheader" className="num mono" title={measured ? `Error under ${c}` : `Simulated cycles under ${c}`}>{c}</span>
            ))}
          </div>
        </div>
        <div ref={scroller} className="kscroll" role="rowgroup" tabIndex={0} aria-label="Kernel error rows, scrollable">
          <div style={{ height: v.getTotalSize(), position: "relative" }}>
            {items.map((it) => {
              const k = rows[it.index];
              return (
                <div
                  key={it.key}
                  role="row"
                  aria-rowindex={it.index + 2}
                  className="rkrow"
                  style={{ ...grid, position: "absolute", top: 0, left: 0, right: 0, height: ROW, transform: `translateY(${it.start}px)` }}
                >
                  <span role="cell">{k.kernelId}</span>
                  <span role="cell"><KernelName name={k.name} displayName={k.displayName} /></span>
                  {configs.map((c, i) => (
                    <span key={c} role="cell" className="num">{measured ? formatPct(k.errors[i]) : formatCount(k.cycles[i])}</span>
                  ))}
                </div>
              );
            })}
          </div>
        </div>
      </div>
      <p className="hint">{formatCount(rows.length)} of {formatCount(total)} kernels loaded</p>
    </div>
  );
}
