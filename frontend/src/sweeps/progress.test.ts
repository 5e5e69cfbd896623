import { describe, expect, test } from "vitest";
import { progressText, sweepActive, type SweepProgress } from "./progress";
import { newest } from "../time";

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

describe("newest of two progress copies", () => {
  const p = { total: 4, done: 1, queued: 2, running: 1, succeeded: 1, failed: 0, cancelled: 0 };
  const older = { ...p, updatedAt: "2026-12-04T08:00:00.000001Z" };
  const newer = { ...p, done: 2, running: 0, succeeded: 2, updatedAt: "2026-12-04T08:00:00.000002Z" };
  test("keeps the copy with the later updatedAt, whichever came last", () => {
    expect(newest(newer, older)).toBe(newer);
    expect(newest(older, newer)).toBe(newer);
    expect(newest(null, older)).toBe(older);
  });
  test("a tie or a copy without updatedAt takes the one that came last", () => {
    const again = { ...older };
    expect(newest(older, again)).toBe(again);
    const none: SweepProgress = { ...p, updatedAt: null };
    expect(newest<SweepProgress>(none, older)).toBe(older);
    expect(newest<SweepProgress>(older, none)).toBe(older);
  });
});
