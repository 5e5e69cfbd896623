import { describe, expect, it } from "vitest";
import { appendLines } from "./PostprocessLog";
import { newest } from "../time";

describe("appendLines", () => {
  it("keeps the newest lines", () => {
    expect(appendLines(["a", "b"], ["c"], 10)).toEqual(["a", "b", "c"]);
    expect(appendLines(["a", "b"], ["c", "d"], 3)).toEqual(["b", "c", "d"]);
  });
});

describe("newest", () => {
  it("prefers the later snapshot", () => {
    const q = { updatedAt: "2026-12-01T10:00:00Z", v: "query" };
    const l = { updatedAt: "2026-12-01T10:00:05Z", v: "live" };
    expect(newest(q, l)?.v).toBe("live");
    expect(newest(l, q)?.v).toBe("live");
    expect(newest(null, q)?.v).toBe("query");
    expect(newest(undefined, undefined)).toBeNull();
  });
});
