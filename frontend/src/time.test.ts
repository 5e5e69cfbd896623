import { describe, expect, it } from "vitest";
import { compareTime } from "./time";

describe("compareTime", () => {
  it("orders Go RFC3339Nano fractions of different lengths", () => {
    expect(compareTime("2026-12-02T14:25:20.75635625Z", "2026-12-02T14:25:20.75635632Z")).toBeLessThan(0);
    expect(compareTime("2026-12-02T14:31:31.1Z", "2026-12-02T14:31:31.128Z")).toBeLessThan(0);
    expect(compareTime("2026-12-02T14:31:31Z", "2026-12-02T14:31:31.5Z")).toBeLessThan(0);
    expect(compareTime("2026-12-02T14:31:32Z", "2026-12-02T14:31:31.999999999Z")).toBeGreaterThan(0);
    expect(compareTime("2026-12-02T14:31:31.50Z", "2026-12-02T14:31:31.5Z")).toBe(0);
  });
  it("compares across zones", () => {
    expect(compareTime("2026-12-02T15:00:00+01:00", "2026-12-02T14:00:00Z")).toBe(0);
    expect(compareTime("2026-12-02T15:00:00.1+01:00", "2026-12-02T14:00:00Z")).toBeGreaterThan(0);
  });
});
