import { describe, expect, test } from "vitest";
import { bucketErrors, errorScale } from "./errorSeries";

describe("bucketErrors", () => {
  const rows = [
    { errors: [10, null] },
    { errors: [-30, 5] },
    { errors: [2, 7] },
    { errors: [null, -1] },
    { errors: [80, null] },
  ];
  test("one bucket a kernel when there is room", () => {
    const [a, b] = bucketErrors(rows, ["A", "B"], 100);
    expect(a.buckets.map((x) => [x.first, x.min, x.max])).toEqual([[0, 10, 10], [1, -30, -30], [2, 2, 2], [4, 80, 80]]);
    expect(b.buckets.map((x) => x.first)).toEqual([1, 2, 3]);
  });
  test("folded buckets keep each one's extremes and count", () => {
    const [a, b] = bucketErrors(rows, ["A", "B"], 2);
    expect(a.buckets).toEqual([
      { first: 0, min: -30, max: 10, n: 3 },
      { first: 3, min: 80, max: 80, n: 1 },
    ]);
    expect(b.buckets).toEqual([
      { first: 0, min: 5, max: 7, n: 2 },
      { first: 3, min: -1, max: -1, n: 1 },
    ]);
  });
  test("no rows, no buckets", () => {
    expect(bucketErrors([], ["A"], 10)).toEqual([{ config: "A", buckets: [] }]);
  });
});

describe("errorScale", () => {
  const s = (...v: number[]) => [{ config: "A", buckets: v.map((x, i) => ({ first: i, min: x, max: x, n: 1 })) }];
  test("rounds the largest |error| up to 1, 2 or 5 × 10^k", () => {
    expect(errorScale(s(0.3))).toBe(1);
    expect(errorScale(s(-13))).toBe(20);
    expect(errorScale(s(41, 3))).toBe(50);
    expect(errorScale(s(100))).toBe(100);
    expect(errorScale(s(101))).toBe(200);
    expect(errorScale([])).toBe(1);
  });
});
