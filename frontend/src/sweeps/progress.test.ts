import { describe, expect, test } from "vitest";
import { progressText, sweepActive } from "./progress";

describe("progressText", () => {
  test("names the counts that are not zero", () => {
    const p = { total: 50, done: 13, queued: 35, running: 2, succeeded: 12, failed: 1, cancelled: 0 };
    expect(progressText(p)).toBe("13 of 50 done · 12 succeeded · 1 failed · 2 running · 35 queued");
    expect(sweepActive(p)).toBe(true);
  });
  test("all succeeded says so once", () => {
    const p = { total: 4, done: 4, queued: 0, running: 0, succeeded: 4, failed: 0, cancelled: 0 };
    expect(progressText(p)).toBe("4 of 4 done");
    expect(sweepActive(p)).toBe(false);
  });
});
