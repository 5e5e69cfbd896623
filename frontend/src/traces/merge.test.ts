import { describe, expect, it } from "vitest";
import { matchesFilter, mergeTrace, Removals, removeTrace, traceListReducer, type TraceFilter, type TraceRow } from "./merge";

function trace(id: string, over: Partial<TraceRow> = {}): TraceRow {
  return {
    id,
    state: "UPLOADING",
    error: null,
    model: null,
    sourceGpu: null,
    kernelCount: 0,
    bytes: 0,
    sample: false,
    createdAt: "2026-12-01T10:00:00Z",
    updatedAt: "2026-12-01T10:00:00Z",
    ...over,
  };
}
const all: TraceFilter = { state: null, search: "" };

describe("mergeTrace", () => {
  const a = trace("a", { createdAt: "2026-12-01T12:00:00Z", updatedAt: "2026-12-01T12:00:00Z" });
  const b = trace("b", { createdAt: "2026-12-01T11:00:00Z", updatedAt: "2026-12-01T11:00:00Z" });

  it("replaces a row in place when its trace grows", () => {
    const grown = { ...b, kernelCount: 12, bytes: 4096, updatedAt: "2026-12-01T13:00:00Z" };
    const rows = mergeTrace([a, b], grown, all);
    expect(rows.map((r) => r.id)).toEqual(["a", "b"]);
    expect(rows[1].kernelCount).toBe(12);
  });

  it("puts a new trace at its place, newest first", () => {
    const c = trace("c", { createdAt: "2026-12-01T13:00:00Z" });
    const d = trace("d", { createdAt: "2026-12-01T11:30:00Z" });
    expect(mergeTrace([a, b], c, all).map((r) => r.id)).toEqual(["c", "a", "b"]);
    expect(mergeTrace([a, b], d, all).map((r) => r.id)).toEqual(["a", "d", "b"]);
  });

  it("ignores an older snapshot than the one shown", () => {
    const shown = { ...a, state: "READY" as const, updatedAt: "2026-12-01T14:00:00Z" };
    const stale = { ...a, state: "PROCESSING" as const, updatedAt: "2026-12-01T13:00:00Z" };
    expect(mergeTrace([shown], stale, all)[0].state).toBe("READY");
  });

  it("drops a row that leaves the state filter and adds one that enters it", () => {
    const ready: TraceFilter = { state: "READY", search: "" };
    const nowReady = { ...b, state: "READY" as const, updatedAt: "2026-12-01T15:00:00Z" };
    expect(mergeTrace([], nowReady, ready).map((r) => r.id)).toEqual(["b"]);
    const failed = { ...nowReady, state: "FAILED" as const, updatedAt: "2026-12-01T16:00:00Z" };
    expect(mergeTrace([nowReady], failed, ready)).toEqual([]);
  });

  it("leaves the list alone for a trace that does not match", () => {
    const rows = [a];
    expect(mergeTrace(rows, trace("zzz"), { state: null, search: "llama" })).toBe(rows);
  });
});

describe("matchesFilter", () => {
  it("searches id and model, case-insensitively", () => {
    const t = trace("run-42", { model: "Llama-3-8B" });
    expect(matchesFilter(t, { state: null, search: "LLAMA" })).toBe(true);
    expect(matchesFilter(t, { state: null, search: "RUN-4" })).toBe(true);
    expect(matchesFilter(t, { state: null, search: "mistral" })).toBe(false);
    expect(matchesFilter(t, { state: "READY", search: "" })).toBe(false);
  });
});

describe("traceListReducer", () => {
  it("counts rows that live events added and removed", () => {
    let s = traceListReducer({ rows: [], filter: all, delta: 0 }, { type: "loaded", rows: [trace("a")], append: false });
    s = traceListReducer(s, { type: "updated", trace: trace("b", { createdAt: "2026-12-02T00:00:00Z" }) });
    expect(s.rows.map((r) => r.id)).toEqual(["b", "a"]);
    expect(s.delta).toBe(1);
    s = traceListReducer(s, { type: "removed", id: "a" });
    s = traceListReducer(s, { type: "removed", id: "nope" });
    expect(s.rows.map((r) => r.id)).toEqual(["b"]);
    expect(s.delta).toBe(0);
    s = traceListReducer(s, { type: "loaded", rows: [trace("x")], append: false });
    expect(s).toMatchObject({ delta: 0, rows: [{ id: "x" }] });
  });

  it("removeTrace keeps the same list when the id is unknown", () => {
    const rows = [trace("a")];
    expect(removeTrace(rows, "b")).toBe(rows);
  });
});

describe("timestamps as the server writes them", () => {
  it("a newer update with a shorter fraction still wins", () => {
    const shown = trace("a", { state: "UPLOADING", updatedAt: "2026-12-02T14:31:31.128Z" });
    const next = trace("a", { state: "FAILED", updatedAt: "2026-12-02T14:31:31.2Z" });
    expect(mergeTrace([shown], next, all)[0].state).toBe("FAILED");
  });
});

describe("Removals", () => {
  it("keeps a removed trace off the list when an update of it arrives after the removal", async () => {
    const r = new Removals();
    const applied: string[] = [];
    const asked: string[] = [];
    const server = new Map<string, TraceRow>();
    const fetchTrace = async (id: string) => {
      asked.push(id);
      return server.get(id) ?? null;
    };
    await r.updated(trace("a"), (t) => applied.push(t.id), fetchTrace);
    expect(applied).toEqual(["a"]);
    expect(asked).toEqual([]);

    r.removed("a");
    await r.updated(trace("a", { updatedAt: "2026-12-01T10:00:01Z" }), (t) => applied.push(t.id), fetchTrace);
    expect(applied).toEqual(["a"]); // the late update is dropped: the server has no "a"
    expect(asked).toEqual(["a"]);

    // Uploaded again: the server has it, so it is shown, and its updates apply again at once.
    server.set("a", trace("a", { updatedAt: "2026-12-01T11:00:00Z", state: "READY" }));
    await r.updated(trace("a", { updatedAt: "2026-12-01T10:59:00Z" }), (t) => applied.push(`${t.id} ${t.state}`), fetchTrace);
    await r.updated(trace("a", { updatedAt: "2026-12-01T11:01:00Z" }), (t) => applied.push(t.id), fetchTrace);
    expect(applied).toEqual(["a", "a READY", "a"]);
    expect(asked).toEqual(["a", "a"]);
  });
});
