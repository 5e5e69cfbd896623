// @vitest-environment jsdom
import { describe, expect, test } from "vitest";
import { ALLOCATION, allocationText, formatCost, formatRate, formatSignedFraction } from "./figures";

describe("allocationText", () => {
  test("labels each reason and explains it in the tooltip, with the allocation before rounding where it decided", () => {
    expect(allocationText("NEYMAN", 2.345)).toEqual({
      label: "Neyman",
      title: "Its share of the least-cost allocation that meets the bound on the total, rounded up. (allocation before rounding: 2.35)",
    });
    expect(allocationText("SIEVE", 0)).toEqual({ label: "Sieve (1)", title: ALLOCATION.SIEVE.meaning });
    expect(allocationText("UNTIMED", 0).title).toMatch(/without a measured duration/);
  });
  test("shows an unknown reason as it is", () => {
    expect(allocationText("NEW_REASON", 1)).toEqual({ label: "NEW_REASON", title: "NEW_REASON" });
  });
  test("every reason has a distinct label", () => {
    const labels = Object.values(ALLOCATION).map((a) => a.label);
    expect(new Set(labels).size).toBe(labels.length);
  });
});

describe("formatCost, formatRate, formatSignedFraction", () => {
  test("cost in warp instructions", () => {
    expect(formatCost(0)).toBe("0");
    expect(formatCost(1234)).toBe("1,234 warp instr.");
    expect(formatCost(5.6e9)).toBe("5.60 G warp instr.");
    expect(formatCost(null)).toBe("—");
  });
  test("rate a second", () => {
    expect(formatRate(1.234e6)).toBe("1.23 M warp instr./s");
    expect(formatRate(0)).toBe("—");
    expect(formatRate(Number.NaN)).toBe("—");
  });
  test("signed error", () => {
    expect(formatSignedFraction(0.0123)).toBe("+1.23 %");
    expect(formatSignedFraction(-0.00042)).toBe("−0.042 %");
    expect(formatSignedFraction(0)).toBe("0 %");
    expect(formatSignedFraction(undefined)).toBe("—");
  });
});
