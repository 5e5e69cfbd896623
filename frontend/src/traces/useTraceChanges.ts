import { useRef } from "react";
import { useEvents } from "../api/useEvents";
import { TraceRemovedSubscription, TraceUpdatedSubscription } from "./documents";

/**
 * Re-reads a page built on one trace's state (New run, Sample) when that state changes or the
 * trace leaves the bucket: a trace that becomes ready enables Launch without a reload. state is
 * the state the page read (null: no such trace; undefined: not read yet, nothing to compare).
 */
export function useTraceStateChanges(traceId: string, state: string | null | undefined, reread: () => void): void {
  const read = useRef(state);
  read.current = state;
  useEvents(TraceUpdatedSubscription, { id: traceId }, (d) => {
    if (read.current !== undefined && d.traceUpdated.state !== read.current) reread();
  });
  useEvents(TraceRemovedSubscription, {}, (d) => {
    if (d.traceRemoved === traceId && read.current) reread();
  });
}

/**
 * Re-reads a page that lists the ready traces (New sweep) when a trace becomes ready, stops
 * being ready, or leaves the bucket. listed holds the ids the page shows.
 */
export function useReadyTraceChanges(listed: ReadonlySet<string> | undefined, reread: () => void): void {
  const shown = useRef(listed);
  shown.current = listed;
  useEvents(TraceUpdatedSubscription, { id: null }, (d) => {
    const ids = shown.current;
    if (ids && (d.traceUpdated.state === "READY") !== ids.has(d.traceUpdated.id)) reread();
  });
  useEvents(TraceRemovedSubscription, {}, (d) => {
    if (shown.current?.has(d.traceRemoved)) reread();
  });
}
