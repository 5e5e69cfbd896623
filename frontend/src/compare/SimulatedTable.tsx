import { DownloadCsv } from "../components/DownloadCsv";
import { formatNs } from "../format";
import { formatStat, headerUnit } from "../runs/stats";
import { simulatedTable, type SimulatedRow } from "./simulated";

/**
 * What the simulator gave under each config, side by side: a statistic a row, a config a column
 * (each config's latest succeeded run, a sampled one, marked, only when it has no other), as Accel-Sim's get_stats.py prints it, and the CSV of the
 * runs' totals and every kernel's figures under each config. It needs no measured timing.
 */
export function SimulatedTable({ traceId, rows }: { traceId: string; rows: readonly (SimulatedRow & { sampled?: boolean })[] }) {
  const stats = simulatedTable(rows);
  return (
    <>
      {/* Narrower than its columns, the table scrolls sideways whole, its header with its rows. */}
      <div className="ktable-wrap">
      <table className="traces compare" aria-label="Simulated figures per config">
        <thead>
          <tr>
            <th scope="col">Statistic</th>
            {rows.map((r) => (
              <th key={r.simConfig} scope="col" className="num mono">
                {r.simConfig}
                {r.sampled && (
                  <span className="tag" data-testid={`sim-sampled-${r.simConfig}`} title="A sampled run: projected from its representatives">
                    sampled
                  </span>
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {stats.map((s) => (
            <tr key={s.name} data-stat={s.name}>
              <th scope="row" className="mono">
                {s.name} <span className="muted">({headerUnit(s.unit)})</span>
              </th>
              {s.values.map((v, i) => (
                <td key={rows[i].simConfig} className="num" data-testid={`sim-${s.name}-${rows[i].simConfig}`}>
                  {s.unit === "ns" ? formatNs(v) : formatStat(v, s.unit)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      </div>
      <p>
        <DownloadCsv url={`/traces/${encodeURIComponent(traceId)}/configs.csv`} filename={`trace-${traceId}-configs.csv`} />{" "}
        <span className="hint">each run's totals and every kernel's figures under each config, one row each</span>
      </p>
    </>
  );
}
