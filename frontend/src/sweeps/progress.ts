import { compareTime } from "../time";

/** A sweep's runs by state, as the API gives them. */
export interface SweepProgress {
  total: number;
  done: number;
  queued: number;
  running: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** The latest updatedAt of the runs counted; null when none is. */
  updatedAt?: string | null;
}

/**
 * The newer of two copies of a sweep's progress (a query's answer, a sweepUpdated event) by
 * updatedAt, which the server reads before the counts; b when they tie. An answer can come
 * after a newer event: see useReplayReducer.
 */
export function newerProgress<P extends SweepProgress>(a: P | null, b: P): P {
  if (!a?.updatedAt) return b;
  if (!b.updatedAt) return a;
  return compareTime(b.updatedAt, a.updatedAt) >= 0 ? b : a;
}

/** "12 of 50 done · 1 failed · 2 running · 35 queued": what a sweep's progress says, zero counts left out. */
export function progressText(p: SweepProgress): string {
  const parts = [`${p.done} of ${p.total} done`];
  if (p.succeeded && p.succeeded !== p.done) parts.push(`${p.succeeded} succeeded`);
  if (p.failed) parts.push(`${p.failed} failed`);
  if (p.cancelled) parts.push(`${p.cancelled} cancelled`);
  if (p.running) parts.push(`${p.running} running`);
  if (p.queued) parts.push(`${p.queued} queued`);
  return parts.join(" · ");
}

/** Whether any of the sweep's runs is not over. */
export function sweepActive(p: SweepProgress): boolean {
  return p.queued + p.running > 0;
}

export function sweepPath(id: string): string {
  return `/sweeps/${encodeURIComponent(id)}`;
}
