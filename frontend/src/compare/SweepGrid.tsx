import { useCallback, useEffect, useRef } from "react";
import { useLiveQuery } from "../api/useLiveQuery";
import { formatNs } from "../format";
import { Link, tracePath } from "../router";
import { formatCorrelation, formatPct } from "../runs/compare";
import { SweepGridQuery } from "./documents";
import { useRefetchOnSweepRunState } from "./liveStates";

/**
 * A sweep's traces × configs: in each cell its run's state, and the run's MAPE, correlation and
 * simulated / measured totals when it succeeded, with how many of the cell's runs succeeded.
 * Live: a run of the sweep that changes state refetches the grid.
 */
export function SweepGrid({ id }: { id: string }) {
  const [{ data, error }, reexecute] = useLiveQuery({ query: SweepGridQuery, variables: { id } });
  const known = useRef(new Map<string, string>()).current;
  const refetch = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  useRefetchOnSweepRunState(id, known, refetch);
  useEffect(() => {
    for (const c of data?.sweep?.grid ?? []) if (c.run) known.set(c.run.id, c.run.state);
  }, [data, known]);
  if (error && !data) return <p role="alert" className="error">Could not load the grid: {error.message}</p>;
  const sweep = data?.sweep;
  if (!sweep) return <p aria-busy="true">Loading grid…</p>;
  const cells = new Map(sweep.grid.map((c) => [`${c.traceId}\u0000${c.simConfig}`, c]));
  return (
    <div className="grid-wrap">
      <table className="traces sweep-grid" aria-label="Traces × configs">
        <thead>
          <tr>
            <th scope="col">Trace</th>
            {sweep.simConfigs.map((c) => (
              <th key={c} scope="col" className="mono">{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sweep.traceIds.map((t) => (
            <tr key={t} data-trace={t}>
              <th scope="row" className="mono">
                <Link href={tracePath(t)}>{t}</Link>{" "}
                <Link href={`${tracePath(t)}/compare`} className="hint">compare</Link>
              </th>
              {sweep.simConfigs.map((cfg) => {
                const c = cells.get(`${t}\u0000${cfg}`);
                if (!c) return <td key={cfg}>—</td>;
                return (
                  <td key={cfg} data-cell={`${t}|${cfg}`}>
                    <div>
                      {c.run ? <Link href={`/runs/${encodeURIComponent(c.run.id)}`}>{c.run.state.toLowerCase()}</Link> : "run gone"}
                      <span className="hint"> · {c.succeeded} of {c.runs} succeeded</span>
                    </div>
                    {c.comparison ? (
                      <div className="hint">
                        MAPE {formatPct(c.comparison.mape, false)} · r {formatCorrelation(c.comparison.correlation)}
                        <br />
                        {formatNs(c.comparison.simTotalNs)} sim / {formatNs(c.comparison.measuredTotalNs)} measured
                      </div>
                    ) : (
                      c.run?.state === "SUCCEEDED" && <div className="hint">no measured timing</div>
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
