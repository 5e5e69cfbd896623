import { useRef } from "react";
import { useEvents } from "../api/useEvents";
import { SweepRunStateSubscription, TraceRunStateSubscription } from "./documents";

/**
 * stateChanged remembers each run's last state seen (from answers and events) and reports
 * whether an event's state is new: a comparison changes only when a run's state does, so
 * progress events of a running run fetch nothing.
 */
export function stateChanged(known: Map<string, string>, run: { id: string; state: string }): boolean {
  if (known.get(run.id) === run.state) return false;
  known.set(run.id, run.state);
  return true;
}

/** Calls refetch when a run of the trace changes state (runUpdated): no polling. */
export function useRefetchOnTraceRunState(traceId: string, known: Map<string, string>, refetch: () => void): void {
  const r = useRef(refetch);
  r.current = refetch;
  useEvents(TraceRunStateSubscription, { traceId }, (d) => {
    if (stateChanged(known, d.runUpdated)) r.current();
  });
}

/** Calls refetch when a run of the sweep changes state (sweepUpdated): no polling. */
export function useRefetchOnSweepRunState(id: string, known: Map<string, string>, refetch: () => void): void {
  const r = useRef(refetch);
  r.current = refetch;
  useEvents(SweepRunStateSubscription, { id }, (d) => {
    if (d.sweepUpdated.run && stateChanged(known, d.sweepUpdated.run)) r.current();
  });
}
