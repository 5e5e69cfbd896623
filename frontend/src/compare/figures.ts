/** A config's row of a comparison, as far as sorting and counting need it. */
export interface ConfigFigures {
  simConfig: string;
  runs: number;
  succeeded: number;
  comparison?: { mape: number } | null;
}

/**
 * byMape orders the configs best first (lowest MAPE); those without figures last, by name.
 * desc reverses the ones with figures.
 */
export function byMape<T extends ConfigFigures>(rows: readonly T[], desc = false): T[] {
  return [...rows].sort((a, b) => {
    const x = a.comparison?.mape, y = b.comparison?.mape;
    if (x == null && y == null) return a.simConfig.localeCompare(b.simConfig);
    if (x == null) return 1;
    if (y == null) return -1;
    return desc ? y - x : x - y;
  });
}

/** best is the config with the lowest MAPE, or null when none has figures. */
export function best(rows: readonly ConfigFigures[]): string | null {
  const [first] = byMape(rows);
  return first?.comparison ? first.simConfig : null;
}

/** succeededOf says how many runs a figure stands for: "1 of 3 succeeded". */
export function succeededOf(c: { runs: number; succeeded: number }): string {
  return `${c.succeeded} of ${c.runs} succeeded`;
}

/**
 * runsKey names the runs the comparison stands on: the per-kernel table reads its kernels again
 * whenever they change, whichever answer or event brought the change (a run's end can reach
 * this page in the comparison's answer before its runUpdated event, which then changes no
 * state seen).
 */
export function runsKey(rows: readonly { simConfig: string; run?: { id: string } | null }[]): string {
  return rows.map((c) => `${c.simConfig}:${c.run?.id ?? ""}`).join("|");
}
