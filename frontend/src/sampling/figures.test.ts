import { describe, expect, test } from "vitest";
import {
  chartScale,
  errorField,
  extent,
  formatBasis,
  formatBound,
  formatCompact,
  formatFraction,
  formatSeconds,
  formatSpeedup,
  niceStep,
  warmupText,
  parseTarget,
  speedup,
} from "./figures";

describe("formatFraction", () => {
  test("keeps two significant digits of small fractions", () => {
    expect(formatFraction(0.0123)).toBe("1.23 %");
    expect(formatFraction(0.00042)).toBe("0.042 %");
    expect(formatFraction(0.0000123)).toBe("0.0012 %");
    expect(formatFraction(0.5)).toBe("50.0 %");
    expect(formatFraction(1)).toBe("100 %");
    expect(formatFraction(0)).toBe("0 %");
    expect(formatFraction(null)).toBe("—");
    expect(formatFraction(Number.NaN)).toBe("—");
  });
  test("a bound is ± the fraction", () => {
    expect(formatBound(0.01)).toBe("±1.00 %");
    expect(formatBound(undefined)).toBe("—");
  });
});

test("formatCompact: exact below 10,000, three significant digits above", () => {
  expect(formatCompact(9999)).toBe("9,999");
  expect(formatCompact(12345)).toBe("12.3 k");
  expect(formatCompact(5.6e9)).toBe("5.60 G");
  expect(formatCompact(123e6)).toBe("123 M");
  expect(formatCompact(-2.5e6)).toBe("-2.50 M");
});

test("formatBasis: ns for durations, warp instructions otherwise", () => {
  expect(formatBasis(3400, "DURATION")).toBe("3.40 µs");
  expect(formatBasis(2e6, "INSTRUCTIONS")).toBe("2.00 M warp instr.");
  expect(formatBasis(null, "DURATION")).toBe("—");
});

test("speedup: the full run's estimate over the seconds spent, unknown without both", () => {
  expect(speedup(120, 10)).toBe(12);
  expect(speedup(null, 10)).toBeNull();
  expect(speedup(120, 0)).toBeNull();
  expect(formatSpeedup(12)).toBe("×12.0");
  expect(formatSpeedup(312.4)).toBe("×312");
  expect(formatSpeedup(1.5)).toBe("×1.50");
  expect(formatSpeedup(null)).toBe("—");
});

test("formatSeconds", () => {
  expect(formatSeconds(0.25)).toBe("250 ms");
  expect(formatSeconds(3.456)).toBe("3.46 s");
  expect(formatSeconds(42.1)).toBe("42.1 s");
  expect(formatSeconds(245)).toBe("4 min 05 s");
  expect(formatSeconds(7620)).toBe("2 h 07 min");
  expect(formatSeconds(null)).toBe("—");
});

describe("parseTarget", () => {
  test("an error bound is typed in percent", () => {
    expect(parseTarget("error", "1")).toEqual({ target: { error: 0.01 }, error: null });
    expect(parseTarget("error", " 0.5 %")).toEqual({ target: { error: 0.005 }, error: null });
    expect(parseTarget("error", "")).toEqual({ target: null, error: null });
    expect(parseTarget("error", "0").error).toMatch(/above 0 %/);
    expect(parseTarget("error", "100").error).toMatch(/below 100 %/);
    expect(parseTarget("error", "abc").error).toMatch(/not a number/);
  });
  test("a budget is a whole number of warp instructions", () => {
    expect(parseTarget("instructions", "2,000,000")).toEqual({ target: { instructions: 2_000_000 }, error: null });
    expect(parseTarget("instructions", "2e6")).toEqual({ target: { instructions: 2_000_000 }, error: null });
    expect(parseTarget("instructions", "1.5").error).toMatch(/whole number/);
    expect(parseTarget("instructions", "-3").error).toMatch(/whole number/);
  });
});

test("errorField: the planner's messages name their argument first", () => {
  expect(errorField("target: error must be > 0 and < 1 (0.01 is 1 %), got 2")).toEqual({
    field: "target",
    text: "error must be > 0 and < 1 (0.01 is 1 %), got 2",
  });
  expect(errorField("warmup: must be 0 to 64 launches, got 99").field).toBe("warmup");
  expect(errorField("method: unknown sampling method").field).toBe("method");
  expect(errorField('traceId: trace "x" is being processed: only a READY trace can be planned')).toEqual({
    field: null,
    text: 'traceId: trace "x" is being processed: only a READY trace can be planned',
  });
});

describe("chartScale", () => {
  test("log when the values span more than 20×, from and to powers of ten", () => {
    const s = chartScale([1500, 3e6, 40_000]);
    expect(s.log).toBe(true);
    expect(s.lo).toBe(1000);
    expect(s.hi).toBe(1e7);
    expect(s.ticks).toEqual([1e3, 1e4, 1e5, 1e6, 1e7]);
    expect(s.at(1e3)).toBe(0);
    expect(s.at(1e5)).toBeCloseTo(0.5);
    expect(s.at(1e7)).toBe(1);
    expect(s.at(1e9)).toBe(1);
  });
  test("linear from 0 otherwise, to a round end", () => {
    const s = chartScale([1000, 9000]);
    expect(s.log).toBe(false);
    expect(s.lo).toBe(0);
    expect(s.hi).toBe(10000);
    expect(s.ticks).toEqual([0, 2000, 4000, 6000, 8000, 10000]);
    expect(s.at(5000)).toBeCloseTo(0.5);
    expect(s.at(-1)).toBe(0);
  });
  test("exactly 20× stays linear; one value or none still gives an axis", () => {
    expect(chartScale([100, 2000]).log).toBe(false);
    const one = chartScale([7]);
    expect(one.hi).toBeGreaterThan(one.lo);
    const none = chartScale([]);
    expect(none.hi).toBeGreaterThan(none.lo);
  });
});

test("niceStep rounds up to 1, 2 or 5 times a power of ten", () => {
  expect(niceStep(1800)).toBe(2000);
  expect(niceStep(0.3)).toBe(0.5);
  expect(niceStep(7)).toBe(10);
  expect(niceStep(0)).toBe(1);
});

test("extent: mean ± sd, its low end kept above 0", () => {
  expect(extent(100, 0.2)).toEqual([80, 120]);
  expect(extent(100, null)).toEqual([100, 100]);
  const [lo, hi] = extent(100, 1.5);
  expect(lo).toBeGreaterThan(0);
  expect(hi).toBe(250);
});

test("warmupText says whether a plan's warm-up is a step or launches", () => {
  expect(warmupText({ warmup: 4, warmupStep: true })).toBe("a step (4 launches)");
  expect(warmupText({ warmup: 1, warmupStep: false })).toBe("1 launch");
  expect(warmupText({ warmup: 0, warmupStep: false })).toBe("0 launches");
});
