/** A sweep's runs by state, as the API gives them. */
export interface SweepProgress {
  total: number;
  done: number;
  queued: number;
  running: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /**
   * The latest updatedAt of the runs counted, which the server reads before the counts; null
   * when none is. Of two copies (a query's answer, a sweepUpdated event) keep the newest.
   */
  updatedAt?: string | null;
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
