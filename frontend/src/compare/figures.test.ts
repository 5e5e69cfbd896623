import { describe, expect, it, test } from "vitest";
import { best, byMape, runsKey, succeededOf } from "./figures";

describe("config figures", () => {
  const rows = [
    { simConfig: "b", runs: 1, succeeded: 0, comparison: null },
    { simConfig: "c", runs: 2, succeeded: 1, comparison: { mape: 30 } },
    { simConfig: "a", runs: 1, succeeded: 1, comparison: { mape: 10 } },
  ];
  it("sorts by MAPE, configs without figures last", () => {
    expect(byMape(rows).map((r) => r.simConfig)).toEqual(["a", "c", "b"]);
    expect(byMape(rows, true).map((r) => r.simConfig)).toEqual(["c", "a", "b"]);
  });
  it("picks the lowest MAPE, none without figures", () => {
    expect(best(rows)).toBe("a");
    expect(best([rows[0]])).toBeNull();
  });
  it("says how many runs went in", () => {
    expect(succeededOf(rows[0])).toBe("0 of 1 succeeded");
  });
});

test("runsKey changes when a config's run does, and only then", () => {
  const a = runsKey([{ simConfig: "A", run: { id: "r1" } }, { simConfig: "B", run: null }]);
  expect(runsKey([{ simConfig: "A", run: { id: "r1" } }, { simConfig: "B", run: null }])).toBe(a);
  expect(runsKey([{ simConfig: "A", run: { id: "r1" } }, { simConfig: "B", run: { id: "r2" } }])).not.toBe(a);
  expect(runsKey([{ simConfig: "A", run: { id: "r3" } }, { simConfig: "B", run: null }])).not.toBe(a);
});
