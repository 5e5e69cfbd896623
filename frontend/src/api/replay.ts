import { useCallback, useRef, useState } from "react";

/**
 * A query's answer is a snapshot of the moment the server ran the query, and the live events
 * that arrived while it travelled may be newer: the UI re-runs its queries after a reconnect and
 * once more a second after subscribing, while changes go on. An answer must not put an older
 * state back on screen (a trace's READY is its last event: nothing would correct it).
 *
 * So a state made of answers and events keeps the events of the last REPLAY_MS and applies
 * them again, in order, on top of each answer. An event the answer already holds changes
 * nothing, since every row carries its updatedAt, which only grows, and the reducers keep the
 * newer copy of a row; a row an event removed stays removed, and one that came back after it
 * comes back again. An answer is assumed to take less than REPLAY_MS to come.
 */
export const REPLAY_MS = 60_000;
/** At most this many events are kept, however many came in REPLAY_MS. */
export const REPLAY_MAX = 10_000;

/** The events of the last windowMs, oldest first. */
export class EventLog<A> {
  private entries: { a: A; at: number }[] = [];

  constructor(
    private readonly windowMs = REPLAY_MS,
    private readonly max = REPLAY_MAX,
  ) {}

  add(a: A, now = Date.now()): void {
    this.entries.push({ a, at: now });
    this.prune(now);
  }

  recent(now = Date.now()): A[] {
    this.prune(now);
    return this.entries.map((e) => e.a);
  }

  private prune(now: number): void {
    let drop = 0;
    while (drop < this.entries.length && (this.entries[drop].at < now - this.windowMs || this.entries.length - drop > this.max)) drop++;
    if (drop > 0) this.entries.splice(0, drop);
  }
}

/** What a snapshot action leaves: the snapshot, then the recent events again, in order. */
export function applySnapshot<S, A>(reducer: (s: S, a: A) => S, s: S, snapshot: A, recent: readonly A[]): S {
  return recent.reduce(reducer, reducer(s, snapshot));
}

/**
 * useReducer for a state built from query answers (the actions isSnapshot picks) and live
 * events (the others): each answer is applied with the recent events applied again after it
 * (see EventLog). The reducer must keep the newer of two copies of a row by its updatedAt.
 */
export function useReplayReducer<S, A>(reducer: (s: S, a: A) => S, initial: S, isSnapshot: (a: A) => boolean): [S, (a: A) => void] {
  const [state, setState] = useState(initial);
  const log = useRef<EventLog<A> | null>(null);
  log.current ??= new EventLog<A>();
  const latest = useRef({ reducer, isSnapshot });
  latest.current = { reducer, isSnapshot };
  const dispatch = useCallback((a: A) => {
    const events = log.current!;
    if (latest.current.isSnapshot(a)) {
      const recent = events.recent();
      setState((s) => applySnapshot(latest.current.reducer, s, a, recent));
    } else {
      events.add(a);
      setState((s) => latest.current.reducer(s, a));
    }
  }, []);
  return [state, dispatch];
}
