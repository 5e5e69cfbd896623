import { newest } from "../time";

interface Timed {
  id: string;
  updatedAt: string;
}

/** The list with each item replaced by its newer live copy (by updatedAt), order kept. */
export function withLive<T extends Timed>(items: readonly T[], live: ReadonlyMap<string, T>): T[] {
  return items.map((it) => newest<T>(live.get(it.id), it));
}

/** How many runs are in each state, in the order a reader wants them: "3 succeeded · 1 running". */
export function stateCounts(runs: readonly { state: string }[]): string {
  const order = ["SUCCEEDED", "RUNNING", "QUEUED", "FAILED", "CANCELLED"];
  const n = new Map<string, number>();
  for (const r of runs) n.set(r.state, (n.get(r.state) ?? 0) + 1);
  const states = [...n.keys()].sort((a, b) => (order.indexOf(a) + 99) % 99 - ((order.indexOf(b) + 99) % 99));
  return states.map((s) => `${n.get(s)} ${s.toLowerCase()}`).join(" · ");
}

/** A run kernel's place in a sampled run: "simulated", "← #12" (projected from launch 12), or null on another run. */
export function sampledMark(k: { simulated?: boolean | null; projectedFrom?: number | null }): string | null {
  if (k.simulated == null) return null;
  if (k.simulated) return "simulated";
  return k.projectedFrom == null ? "projected" : `← #${k.projectedFrom}`;
}
