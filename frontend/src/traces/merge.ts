import type { TraceState, TraceSummaryFragment } from "../gql/graphql";
import { compareTime } from "../time";

export type TraceRow = TraceSummaryFragment;

export interface TraceFilter {
  state: TraceState | null;
  search: string;
}

/** The server's rule for `traces(search:)`: id or model contains the text, case-insensitively. */
export function matchesFilter(t: TraceRow, f: TraceFilter): boolean {
  if (f.state && t.state !== f.state) return false;
  const q = f.search.trim().toLowerCase();
  if (!q) return true;
  return t.id.toLowerCase().includes(q) || (t.model ?? "").toLowerCase().includes(q);
}

/** Newest first, as the server lists them; ties by id so the order is stable. */
export function compareTraces(a: TraceRow, b: TraceRow): number {
  const byTime = compareTime(b.createdAt, a.createdAt);
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Merge one traceUpdated event into the list on screen: replace the row in place, insert a new
 * trace at its sorted position, or drop a row that no longer matches the filter.
 */
export function mergeTrace(rows: readonly TraceRow[], t: TraceRow, f: TraceFilter): TraceRow[] {
  const i = rows.findIndex((r) => r.id === t.id);
  const keep = matchesFilter(t, f);
  if (i >= 0) {
    if (!keep) return [...rows.slice(0, i), ...rows.slice(i + 1)];
    // An older snapshot than the one shown is dropped (events can race a refetch).
    if (compareTime(rows[i].updatedAt, t.updatedAt) > 0) return rows as TraceRow[];
    const next = rows.slice();
    next[i] = t;
    return next;
  }
  if (!keep) return rows as TraceRow[];
  const next = rows.slice();
  let at = next.findIndex((r) => compareTraces(t, r) < 0);
  if (at < 0) at = next.length;
  next.splice(at, 0, t);
  return next;
}

export function removeTrace(rows: readonly TraceRow[], id: string): TraceRow[] {
  const i = rows.findIndex((r) => r.id === id);
  return i < 0 ? (rows as TraceRow[]) : [...rows.slice(0, i), ...rows.slice(i + 1)];
}

export type TraceListAction =
  | { type: "loaded"; rows: TraceRow[]; append: boolean }
  | { type: "updated"; trace: TraceRow }
  | { type: "removed"; id: string };

export interface TraceListState {
  rows: TraceRow[];
  filter: TraceFilter;
  /** Rows live events added beyond the loaded pages; the count shown adjusts by them. */
  delta: number;
}

export function traceListReducer(s: TraceListState, a: TraceListAction): TraceListState {
  switch (a.type) {
    case "loaded": {
      if (!a.append) return { ...s, rows: a.rows, delta: 0 };
      let rows = s.rows;
      for (const r of a.rows) rows = mergeTrace(rows, r, s.filter);
      return { ...s, rows };
    }
    case "updated": {
      const rows = mergeTrace(s.rows, a.trace, s.filter);
      return { ...s, rows, delta: s.delta + (rows.length - s.rows.length) };
    }
    case "removed": {
      const rows = removeTrace(s.rows, a.id);
      return { ...s, rows, delta: s.delta + (rows.length - s.rows.length) };
    }
  }
}

/**
 * The ids traceRemoved named, whose later traceUpdated events are checked with the server
 * before they touch the list. The two subscriptions have no order between them: an update
 * published just before a trace's removal (a scan that saw its files go) can arrive after the
 * removal and would put the row back, a ghost until a reload. A trace uploaded again under the
 * same id is back once the server says so.
 */
export class Removals {
  private ids = new Set<string>();

  removed(id: string): void {
    this.ids.add(id);
  }

  /** Applies t, or, for a removed id, what the server holds of it now (nothing when gone). */
  async updated(t: TraceRow, apply: (t: TraceRow) => void, fetchTrace: (id: string) => Promise<TraceRow | null | undefined>): Promise<void> {
    if (!this.ids.has(t.id)) {
      apply(t);
      return;
    }
    const now = await fetchTrace(t.id);
    if (now) {
      this.ids.delete(t.id);
      apply(now);
    }
  }
}
