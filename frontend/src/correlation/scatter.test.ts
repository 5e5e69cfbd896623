import { describe, expect, test } from "vitest";
import { chooseAxis, formatTick, formatValue, nearestPoint, scatterData } from "./scatter";

describe("chooseAxis", () => {
  test("positive values spanning more than two decades go on log axes, out to whole decades", () => {
    const a = chooseAxis([12, 3400, 98000]);
    expect(a.kind).toBe("log");
    expect(a.min).toBe(10);
    expect(a.max).toBe(1e6);
  });
  test("values within two decades stay linear, padded and not below 0 when none is", () => {
    const a = chooseAxis([5000, 8000, 400000 / 100]);
    expect(a.kind).toBe("linear");
    expect(a.min).toBeCloseTo(3800);
    expect(a.max).toBeCloseTo(8200);
    expect(chooseAxis([0, 0.5, 1]).min).toBe(0);
  });
  test("zero among values spanning decades: asinh, linear near 0 below the least nonzero", () => {
    const a = chooseAxis([0, 3, 5000]);
    expect(a.kind).toBe("asinh");
    expect(a.threshold).toBe(3);
    expect(a.min).toBe(0);
    expect(a.max).toBe(7500);
    const neg = chooseAxis([-10, 2, 5000]);
    expect(neg.kind).toBe("asinh");
    expect(neg.min).toBe(-15);
  });
  test("all zero, or nothing: a linear axis that still has a range", () => {
    expect(chooseAxis([0, 0])).toMatchObject({ kind: "linear", min: 0, max: 0.05 });
    expect(chooseAxis([])).toMatchObject({ kind: "linear", min: 0, max: 1 });
    expect(chooseAxis([7, 7]).max).toBeGreaterThan(7);
  });
});

describe("scatterData", () => {
  const pairs = [
    { seq: 2, simulated: 300, measured: 200 },
    { seq: 0, simulated: 90, measured: 100 },
    { seq: 1, simulated: 150, measured: 100 },
    { seq: 3, simulated: Number.NaN, measured: 5 },
  ];
  test("points by measured then launch order, the diagonal at the axis' ends, non-finite left out", () => {
    const d = scatterData(pairs);
    expect(d.pairs.map((p) => p.seq)).toEqual([0, 1, 2]);
    expect(d.xs).toEqual([d.axis.min, 100, 100, 200, d.axis.max]);
    expect(d.simulated).toEqual([null, 90, 150, 300, null]);
    expect(d.projected).toEqual([null, null, null, null, null]);
    expect(d.diagonal).toEqual([d.axis.min, null, null, null, d.axis.max]);
    expect(d.sampled).toBe(false);
    expect(d.omitted).toBe(1);
    expect(d.axis.kind).toBe("linear");
  });
  test("a sampled run's projected launches are a series of their own", () => {
    const d = scatterData([
      { seq: 0, simulated: 10, measured: 10, representative: true },
      { seq: 1, simulated: 10, measured: 12, representative: false },
    ]);
    expect(d.sampled).toBe(true);
    expect(d.simulated).toEqual([null, 10, null, null]);
    expect(d.projected).toEqual([null, null, 10, null]);
  });
});

test("nearestPoint takes the closest within the radius, none beyond", () => {
  const pts: [number, number][] = [
    [10, 10],
    [20, 20],
    [100, 100],
  ];
  expect(nearestPoint(3, (i) => pts[i], 18, 18)).toBe(1);
  expect(nearestPoint(3, (i) => pts[i], 60, 60)).toBeNull();
  expect(nearestPoint(3, (i) => pts[i], 60, 60, 60)).toBe(2);
});

test("values and ticks read", () => {
  expect(formatValue(1234567)).toBe("1,234,567");
  expect(formatValue(0.123456)).toBe("0.1235");
  expect(formatValue(1234.6)).toBe("1,235");
  expect(formatValue(null)).toBe("—");
  expect(formatTick(25000)).toBe("25k");
  expect(formatTick(1e6)).toBe("1M");
  expect(formatTick(0.5)).toBe("0.5");
});
