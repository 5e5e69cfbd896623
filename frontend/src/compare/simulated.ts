/** What the table of simulated figures needs of a config's row. */
export interface SimulatedRow {
  simConfig: string;
  run?: {
    statCounters: readonly { name: string; unit: string }[];
    statTotals: readonly (number | null)[];
    figures: { coreClockMHz?: number | null };
  } | null;
}

/** A run's total of the named statistic; null without the run, the statistic or a finite value. */
function total(r: SimulatedRow, name: string): number | null {
  if (!r.run) return null;
  const i = r.run.statCounters.findIndex((c) => c.name === name);
  const v = i < 0 ? null : r.run.statTotals[i];
  return v != null && Number.isFinite(v) ? v : null;
}

/**
 * simulatedNs is the time the config's run simulated, its cycles at the config's core clock, in
 * ns: what the configs compared show as their simulated total when no measured timing gives one.
 */
export function simulatedNs(r: SimulatedRow): number | null {
  const clock = r.run?.figures.coreClockMHz;
  const c = total(r, "cycles");
  return c != null && clock ? (c * 1000) / clock : null;
}

/** One statistic of the table: its name, unit, and value under each config (null: none). */
export interface SimulatedStat {
  name: string;
  unit: string;
  values: (number | null)[];
}

/**
 * simulatedTable is what the simulator gave under each config, a statistic a row, as Accel-Sim's
 * get_stats.py prints it: the run's cycles, its time at the config's core clock, its IPC
 * (instructions over cycles); when any run was simulated with power (AccelWattch), its energy,
 * its average power (energy over time, so a config's power weighs its kernels by their time) and
 * its performance per watt (instructions per joule) beside them; then every other statistic any
 * config's run has, by name, in the order first met. A config without a succeeded run has no
 * values.
 */
export function simulatedTable(rows: readonly SimulatedRow[]): SimulatedStat[] {
  const cycles = rows.map((r) => total(r, "cycles"));
  const time = rows.map(simulatedNs);
  const ipc = rows.map((r, i) => {
    const insts = total(r, "instructions");
    const c = cycles[i];
    return insts != null && c ? insts / c : null;
  });
  const out: SimulatedStat[] = [
    { name: "cycles", unit: "cycles", values: cycles },
    { name: "time", unit: "ns", values: time },
    { name: "IPC", unit: "insts/cycle", values: ipc },
  ];
  const seen = new Set(["cycles"]);
  const energy = rows.map((r) => total(r, "energy"));
  if (energy.some((e) => e != null)) {
    out.push(
      { name: "energy", unit: "J", values: energy },
      {
        name: "average power",
        unit: "W",
        values: energy.map((e, i) => {
          const ns = time[i];
          return e != null && ns ? e / (ns * 1e-9) : null;
        }),
      },
      { name: "performance per watt", unit: "insts/J", values: rows.map((r) => total(r, "insts_per_joule")) },
    );
    seen.add("energy").add("insts_per_joule");
  }
  for (const r of rows) {
    for (const c of r.run?.statCounters ?? []) {
      if (seen.has(c.name)) continue;
      seen.add(c.name);
      out.push({ name: c.name, unit: c.unit, values: rows.map((x) => total(x, c.name)) });
    }
  }
  return out;
}
