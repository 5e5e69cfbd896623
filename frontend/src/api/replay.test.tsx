// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { act, renderHook } from "@testing-library/react";
import { applySnapshot, EventLog, useReplayReducer } from "./replay";
import { traceListReducer, type TraceListAction, type TraceListState, type TraceRow } from "../traces/merge";

function trace(id: string, state: TraceRow["state"], updatedAt: string, createdAt = "2026-12-01T10:00:00Z"): TraceRow {
  return { id, state, error: null, model: null, sourceGpu: null, kernelCount: 0, bytes: 0, sample: false, createdAt, updatedAt };
}
const empty: TraceListState = { rows: [], filter: { state: null, search: "" }, delta: 0 };
const loaded = (...rows: TraceRow[]): TraceListAction => ({ type: "loaded", rows, append: false });
const updated = (t: TraceRow): TraceListAction => ({ type: "updated", trace: t });
const shown = (s: TraceListState) => s.rows.map((r) => `${r.id}:${r.state}`);

describe("EventLog", () => {
  it("keeps the events of the window, oldest first, and at most max", () => {
    const log = new EventLog<number>(1000, 3);
    log.add(1, 0);
    log.add(2, 500);
    expect(log.recent(900)).toEqual([1, 2]);
    expect(log.recent(1200)).toEqual([2]);
    log.add(3, 1300);
    log.add(4, 1301);
    log.add(5, 1302);
    expect(log.recent(1302)).toEqual([3, 4, 5]);
    expect(log.recent(5000)).toEqual([]);
  });
});

describe("applySnapshot", () => {
  const uploading = trace("t", "UPLOADING", "2026-12-01T10:00:01Z");
  const processing = trace("t", "PROCESSING", "2026-12-01T10:00:02Z");
  const ready = trace("t", "READY", "2026-12-01T10:00:03Z");

  it("an answer older than the events shown does not undo them", () => {
    // The answer was taken while the trace uploaded; PROCESSING and READY came meanwhile.
    const before = [updated(processing), updated(ready)].reduce(traceListReducer, traceListReducer(empty, loaded(uploading)));
    expect(shown(before)).toEqual(["t:READY"]);
    const after = applySnapshot(traceListReducer, before, loaded(uploading), [updated(processing), updated(ready)]);
    expect(shown(after)).toEqual(["t:READY"]);
    expect(after.delta).toBe(0);
  });

  it("an answer newer than the events replayed keeps what it says", () => {
    const s = applySnapshot(traceListReducer, empty, loaded(ready), [updated(uploading), updated(processing)]);
    expect(shown(s)).toEqual(["t:READY"]);
  });

  it("a trace removed after the answer stays removed, one re-created after that comes back", () => {
    const again = trace("t", "UPLOADING", "2026-12-01T10:00:05Z", "2026-12-01T10:00:05Z");
    const events: TraceListAction[] = [{ type: "removed", id: "t" }];
    expect(shown(applySnapshot(traceListReducer, empty, loaded(ready), events))).toEqual([]);
    expect(applySnapshot(traceListReducer, empty, loaded(ready), events).delta).toBe(-1);
    const s = applySnapshot(traceListReducer, empty, loaded(ready), [...events, updated(again)]);
    expect(shown(s)).toEqual(["t:UPLOADING"]);
    expect(s.rows[0].updatedAt).toBe(again.updatedAt);
    expect(s.delta).toBe(0);
  });

  it("a trace new since the answer joins it and counts", () => {
    const other = trace("u", "UPLOADING", "2026-12-01T10:00:04Z", "2026-12-01T10:00:04Z");
    const s = applySnapshot(traceListReducer, empty, loaded(ready), [updated(ready), updated(other)]);
    expect(shown(s)).toEqual(["u:UPLOADING", "t:READY"]);
    expect(s.delta).toBe(1);
  });
});

describe("useReplayReducer", () => {
  it("applies each answer with the recent events again on top", () => {
    const { result } = renderHook(() => useReplayReducer(traceListReducer, empty, (a) => a.type === "loaded"));
    const [, dispatch] = result.current;
    act(() => dispatch(loaded(trace("t", "UPLOADING", "2026-12-01T10:00:01Z"))));
    act(() => dispatch(updated(trace("t", "READY", "2026-12-01T10:00:03Z"))));
    expect(shown(result.current[0])).toEqual(["t:READY"]);
    // A refetch sent before READY, answered after it.
    act(() => dispatch(loaded(trace("t", "PROCESSING", "2026-12-01T10:00:02Z"))));
    expect(shown(result.current[0])).toEqual(["t:READY"]);
    // An event and an answer in one batch, in the order they came.
    act(() => {
      dispatch(updated(trace("t", "FAILED", "2026-12-01T10:00:04Z")));
      dispatch(loaded(trace("t", "READY", "2026-12-01T10:00:03Z")));
    });
    expect(shown(result.current[0])).toEqual(["t:FAILED"]);
  });
});
