import { expect, test } from "vitest";
import { sampledMark, stateCounts, withLive } from "./sampled";

test("withLive takes the newer copy of each item, keeping the order", () => {
  const a = { id: "a", updatedAt: "2026-01-01T00:00:01Z", state: "QUEUED" };
  const b = { id: "b", updatedAt: "2026-01-01T00:00:05Z", state: "RUNNING" };
  const live = new Map([
    ["a", { id: "a", updatedAt: "2026-01-01T00:00:02.5Z", state: "RUNNING" }],
    ["b", { id: "b", updatedAt: "2026-01-01T00:00:04Z", state: "QUEUED" }],
  ]);
  expect(withLive([a, b], live).map((r) => r.state)).toEqual(["RUNNING", "RUNNING"]);
  expect(withLive([b, a], new Map())).toEqual([b, a]);
});

test("stateCounts counts, succeeded first, unknown states last", () => {
  expect(stateCounts([{ state: "RUNNING" }, { state: "SUCCEEDED" }, { state: "SUCCEEDED" }])).toBe("2 succeeded · 1 running");
  expect(stateCounts([{ state: "ODD" }, { state: "FAILED" }])).toBe("1 failed · 1 odd");
  expect(stateCounts([])).toBe("");
});

test("sampledMark", () => {
  expect(sampledMark({ simulated: null })).toBeNull();
  expect(sampledMark({})).toBeNull();
  expect(sampledMark({ simulated: true, projectedFrom: null })).toBe("simulated");
  expect(sampledMark({ simulated: false, projectedFrom: 12 })).toBe("← #12");
  expect(sampledMark({ simulated: false })).toBe("projected");
});
