import { describe, expect, test } from "vitest";
import { axisChart, formatSpeedup, gridSize, parseValues, rowSpeedups, speedups, type DesignCell } from "./design";

const cell = (values: string[], timeNs: number | null, extra: Partial<DesignCell> = {}): DesignCell => ({
  simConfig: `SM7_QV100 ${values.join(" ")}`,
  base: "SM7_QV100",
  values,
  shipped: false,
  runs: 1,
  succeeded: timeNs == null ? 0 : 1,
  timeNs,
  sampled: 0,
  ...extra,
});

describe("speedups", () => {
  test("the baseline's time over each cell's; none without a time", () => {
    const cs = [cell(["40"], 6000), cell(["80"], 4000), cell(["20"], null)];
    expect(speedups(cs, 1).map((s) => s.speedup)).toEqual([4000 / 6000, 1, null]);
    expect(speedups(cs, 0).map((s) => s.speedup)).toEqual([1, 1.5, null]);
    expect(speedups(cs, 2).map((s) => s.speedup)).toEqual([null, null, null]);
    expect(speedups(cs, 1)[0]).toMatchObject({ low: null, high: null });
  });
  test("a sampled cell's interval bounds its speedup, the baseline's too", () => {
    const cs = [cell(["40"], 2000, { sampled: 1, timeLowNs: 1800, timeHighNs: 2500 }), cell(["80"], 4000)];
    expect(speedups(cs, 1)[0]).toEqual({ speedup: 2, low: 4000 / 2500, high: 4000 / 1800 });
    expect(speedups(cs, 0)[1]).toEqual({ speedup: 0.5, low: 1800 / 4000, high: 2500 / 4000 });
    expect(speedups(cs, 1)[1]).toEqual({ speedup: 1, low: null, high: null });
  });
  test("rows and their text", () => {
    expect(rowSpeedups([10, 20, null], 1)).toEqual([2, 1, null]);
    expect(formatSpeedup(1.2345)).toBe("1.23×");
    expect(formatSpeedup(null)).toBe("—");
  });
});

describe("axisChart", () => {
  const axes = [{ option: "-gpgpu_n_clusters", values: ["40", "80", "20"] }, { values: ["", "1455MHZ"] }];
  const cs = [
    cell(["40", ""], 600),
    cell(["40", "1455MHZ"], 500),
    cell(["80", ""], 400),
    cell(["80", "1455MHZ"], null),
    cell(["20", ""], 900, { timeLowNs: 800, timeHighNs: 1000 }),
    cell(["20", "1455MHZ"], 700),
  ];
  test("a numeric axis: its values as x, one line per value of the other axis, sorted by x", () => {
    const c = axisChart(axes, cs, 0);
    expect(c.numeric).toBe(true);
    expect(c.ticks.map((t) => t.x)).toEqual([40, 80, 20]);
    expect(c.lines.map((l) => l.name)).toEqual(["modifier none", "modifier 1455MHZ"]);
    expect(c.lines[0].points.map((p) => [p.x, p.timeNs, p.lowNs, p.highNs])).toEqual([
      [20, 900, 800, 1000],
      [40, 600, null, null],
      [80, 400, null, null],
    ]);
    // The cell without a time is left out; its line keeps the others.
    expect(c.lines[1].points.map((p) => p.cell)).toEqual([5, 1]);
  });
  test("an axis of modifiers: places as x, one line per cluster count", () => {
    const c = axisChart(axes, cs, 1);
    expect(c.numeric).toBe(false);
    expect(c.ticks).toEqual([
      { x: 0, label: "none" },
      { x: 1, label: "1455MHZ" },
    ]);
    expect(c.lines.map((l) => l.name)).toEqual(["-gpgpu_n_clusters 40", "-gpgpu_n_clusters 80", "-gpgpu_n_clusters 20"]);
    expect(c.lines[1].points).toHaveLength(1);
  });
  test("one axis: one line, named by nothing; several bases name theirs", () => {
    const one = axisChart([axes[0]], [cell(["40"], 1), cell(["80"], 2)], 0);
    expect(one.lines.map((l) => l.name)).toEqual([""]);
    const two = axisChart([axes[0]], [cell(["40"], 1), cell(["40"], 2, { base: "SM90_H100" })], 0);
    expect(two.lines.map((l) => l.name)).toEqual(["SM7_QV100", "SM90_H100"]);
  });
});

test("grid size and values", () => {
  expect(gridSize(2, [{ values: [1, 2, 3] }, { values: [1, 2] }])).toBe(12);
  expect(gridSize(1, [])).toBe(1);
  expect(parseValues(" 20, 40 ,80")).toEqual(["20", "40", "80"]);
  expect(parseValues("  ")).toEqual([]);
  expect(parseValues("none,")).toEqual(["none", ""]);
});
