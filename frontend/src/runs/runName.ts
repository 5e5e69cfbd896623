/** What runName needs of a run. */
export interface NamedRun {
  id: string;
  label?: string | null;
  trace: { id: string };
  simConfig: { name: string };
  sweep?: { id: string; label?: string | null } | null;
}

/**
 * The name a run goes by: its label, or its id when it has none. A sweep gives each of its
 * runs its own label, so a run that carries its sweep's label (or none, as its sweep) is named
 * by it, its trace and its config, "llama sweep · trace-7 · SM90_H100", which tell the sweep's
 * runs apart in a list of runs. Only the display: the run's label stays the sweep's.
 */
export function runName(r: NamedRun): string {
  const label = r.label ?? "";
  if (r.sweep && label === (r.sweep.label ?? "")) {
    return [label || `sweep ${r.sweep.id}`, r.trace.id, r.simConfig.name].join(" · ");
  }
  return label || r.id;
}
