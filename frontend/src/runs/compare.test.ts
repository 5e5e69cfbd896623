import { describe, expect, it } from "vitest";
import { formatCorrelation, formatPct, isActive, mergeRun, parseKernelIds, progressFraction, runListReducer, scatterPoints } from "./compare";

describe("scatterPoints", () => {
  it("keeps kernels with both times, sorted by measured time", () => {
    const p = scatterPoints([
      { kernelId: 1, name: "a", simTimeNs: 300, measuredNs: 200 },
      { kernelId: 2, name: "b", simTimeNs: 50, measuredNs: 100 },
      { kernelId: 3, name: "c", simTimeNs: null, measuredNs: 100 },
      { kernelId: 4, name: "d", simTimeNs: 10, measuredNs: 0 },
    ]);
    expect(p.x).toEqual([100, 200]);
    expect(p.y).toEqual([50, 300]);
    expect(p.kernels.map((k) => k.kernelId)).toEqual([2, 1]);
    expect([p.min, p.max]).toEqual([50, 300]);
  });
  it("is empty without measured times", () => {
    expect(scatterPoints([{ kernelId: 1, name: "a", simTimeNs: 5 }]).x).toEqual([]);
  });
});

describe("parseKernelIds", () => {
  it("reads ids and ranges", () => {
    expect(parseKernelIds("1-3, 7 5,5")).toEqual({ ids: [1, 2, 3, 5, 7], error: null });
    expect(parseKernelIds("   ")).toEqual({ ids: null, error: null });
  });
  it("refuses what it cannot read", () => {
    expect(parseKernelIds("1-x").error).toMatch(/not a kernel id/);
    expect(parseKernelIds("9-3").error).toMatch(/backwards/);
  });
});

describe("run helpers", () => {
  it("formats signed and unsigned percentages", () => {
    expect(formatPct(12.345)).toBe("+12.3 %");
    expect(formatPct(-4)).toBe("−4.0 %");
    expect(formatPct(0)).toBe("0.0 %");
    expect(formatPct(250, false)).toBe("250 %");
    expect(formatPct(null)).toBe("—");
    expect(formatCorrelation(0.98765)).toBe("0.988");
    expect(formatCorrelation(null)).toMatch(/needs 2/);
  });
  it("progress and activity", () => {
    expect(progressFraction({ kernelsDone: 3, kernelsTotal: 4 })).toBe(0.75);
    expect(progressFraction({ kernelsDone: 0, kernelsTotal: 0 })).toBeNull();
    expect(isActive("RUNNING")).toBe(true);
    expect(isActive("CANCELLED")).toBe(false);
  });
  it("mergeRun keeps newest first and honours the state filter", () => {
    const a = { id: "a", state: "RUNNING", createdAt: "2026-12-02T10:00:00Z", updatedAt: "2026-12-02T10:00:01Z" };
    const b = { id: "b", state: "QUEUED", createdAt: "2026-12-02T11:00:00.5Z", updatedAt: "2026-12-02T11:00:00.5Z" };
    expect(mergeRun([a], b, null).map((r) => r.id)).toEqual(["b", "a"]);
    expect(mergeRun([a], { ...a, state: "SUCCEEDED" }, null)[0].state).toBe("SUCCEEDED");
    expect(mergeRun([a], { ...a, state: "SUCCEEDED" }, "RUNNING")).toEqual([]);
    expect(mergeRun([a], b, "RUNNING")).toEqual([a]);
  });
  it("mergeRun honours the failure class filter: a run joins once it fails so", () => {
    const a = { id: "a", state: "RUNNING", failureClass: null as string | null, createdAt: "2026-12-02T10:00:00Z", updatedAt: "2026-12-02T10:00:01Z" };
    const failed = { ...a, state: "FAILED", failureClass: "DEADLOCK", updatedAt: "2026-12-02T10:00:02Z" };
    expect(mergeRun([], a, null, "DEADLOCK")).toEqual([]);
    expect(mergeRun([], failed, null, "DEADLOCK")).toEqual([failed]);
    expect(mergeRun([], failed, null, "ASSERTION")).toEqual([]);
    expect(mergeRun([a], failed, null, null)).toEqual([failed]);
  });
  it("a segment's events never add it to a runs list (QA: segments showed on the trace page while a sampled run ran)", () => {
    const a = { id: "a", state: "RUNNING", createdAt: "2026-12-02T10:00:00Z", updatedAt: "2026-12-02T10:00:01Z", sampledBy: null as { id: string } | null };
    const segment = { id: "s", state: "RUNNING", createdAt: "2026-12-02T10:00:02Z", updatedAt: "2026-12-02T10:00:02Z", sampledBy: { id: "a" } };
    expect(runListReducer([a], { type: "updated", run: segment }, null)).toEqual([a]);
    expect(runListReducer([a], { type: "updated", run: { ...segment, sampledBy: null } }, null).map((r) => r.id)).toEqual(["s", "a"]);
  });
  it("mergeRun keeps the newer copy of a run by updatedAt", () => {
    const running = { id: "a", state: "RUNNING", createdAt: "2026-12-02T10:00:00Z", updatedAt: "2026-12-02T10:00:01.000002Z" };
    const done = { ...running, state: "SUCCEEDED", updatedAt: "2026-12-02T10:00:01.000003Z" };
    expect(mergeRun([done], running, null)).toEqual([done]);
    expect(mergeRun([done], running, "RUNNING")).toEqual([done]); // an older copy does not filter the row out either
    expect(mergeRun([running], done, null)).toEqual([done]);
  });
});
