import { describe, expect, it } from "vitest";
import { countOf, formatBytes, formatCount, formatDim3, formatDurationMs, formatNs } from "./format";

describe("formatBytes", () => {
  it.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1024, "1.00 KiB"],
    [1536, "1.50 KiB"],
    [10 * 1024 * 1024, "10.0 MiB"],
    [150 * 1024 ** 3, "150 GiB"],
    [2.2 * 1024 ** 4, "2.20 TiB"],
    [2 ** 53, "8.00 PiB"],
  ])("%d bytes → %s", (n, want) => expect(formatBytes(n)).toBe(want));
  it("shows a dash for nothing", () => {
    expect(formatBytes(null)).toBe("—");
    expect(formatBytes(undefined)).toBe("—");
    expect(formatBytes(NaN)).toBe("—");
  });
});

describe("formatNs", () => {
  it.each([
    [812, "812 ns"],
    [1250, "1.25 µs"],
    [3_400_000, "3.40 ms"],
    [123_456_789, "123 ms"],
    [2e9, "2.00 s"],
    [-1500, "-1.50 µs"],
  ])("%d ns → %s", (n, want) => expect(formatNs(n)).toBe(want));
});

describe("formatDurationMs", () => {
  it.each([
    [450, "450 ms"],
    [12_300, "12 s"],
    [185_000, "3 min 05 s"],
    [7_620_000, "2 h 07 min"],
  ])("%d ms → %s", (n, want) => expect(formatDurationMs(n)).toBe(want));
  it("refuses negative durations", () => expect(formatDurationMs(-1)).toBe("—"));
});

describe("counts and dims", () => {
  it("groups thousands", () => expect(formatCount(100000)).toBe("100,000"));
  it("writes dims x×y×z", () => expect(formatDim3({ x: 128, y: 1, z: 1 })).toBe("128×1×1"));
  it("names one in the singular", () => {
    expect(countOf(1, "config")).toBe("1 config");
    expect(countOf(0, "config")).toBe("0 configs");
    expect(countOf(1200, "run")).toBe("1,200 runs");
  });
});
