import { describe, expect, it } from "vitest";
import { makeCursorCodec, planFetches, type ChunkPlanInput } from "./kernelChunks";

const base = (over: Partial<ChunkPlanInput>): ChunkPlanInput => ({
  start: 0,
  end: 30,
  total: 100_000,
  chunkSize: 2000,
  loaded: new Set(),
  inFlight: new Set(),
  cursorFor: (k) => (k === 0 ? null : undefined),
  maxInFlight: 2,
  ...over,
});

describe("planFetches", () => {
  it("fetches the first chunk first", () => {
    expect(planFetches(base({}))).toEqual([0]);
  });
  it("nothing for an empty list or a loaded view", () => {
    expect(planFetches(base({ total: 0 }))).toEqual([]);
    expect(planFetches(base({ loaded: new Set([0]) }))).toEqual([]);
  });
  it("prefetches the next chunk near the end of one", () => {
    const cursorFor = (k: number) => (k <= 1 ? `c${k}` : undefined);
    expect(planFetches(base({ start: 1500, end: 1530, loaded: new Set([0]), cursorFor }))).toEqual([1]);
  });
  it("walks towards a far chunk in order when cursors are opaque", () => {
    const cursorFor = (k: number) => (k === 0 ? null : k <= 3 ? `c${k}` : undefined);
    const loaded = new Set([0, 1, 2]);
    expect(planFetches(base({ start: 90_000, end: 90_030, loaded, cursorFor }))).toEqual([3]);
    expect(planFetches(base({ start: 90_000, end: 90_030, loaded, cursorFor, inFlight: new Set([3]) }))).toEqual([]);
  });
  it("jumps straight to a far chunk when its cursor is known", () => {
    const cursorFor = (k: number) => (k === 0 ? null : `c${k}`);
    expect(planFetches(base({ start: 90_000, end: 90_030, cursorFor }))).toEqual([45]);
    expect(planFetches(base({ start: 99_980, end: 99_999, cursorFor }))).toEqual([49]);
  });
  it("respects the in-flight limit", () => {
    const cursorFor = (k: number) => (k === 0 ? null : `c${k}`);
    expect(planFetches(base({ start: 1900, end: 4100, cursorFor, maxInFlight: 2 }))).toEqual([0, 1]);
    expect(planFetches(base({ start: 1900, end: 4100, cursorFor, inFlight: new Set([0, 1]) }))).toEqual([]);
  });
});

describe("makeCursorCodec", () => {
  it("computes cursors only after the server's own cursor matched", () => {
    const c = makeCursorCodec();
    expect(c.cursorAfter(3999)).toBeUndefined();
    c.observe(1999, "c2VxOjE5OTk"); // base64url("seq:1999")
    expect(c.verified).toBe(true);
    expect(c.cursorAfter(3999)).toBe("c2VxOjM5OTk");
  });
  it("stays sequential for cursors it does not recognise", () => {
    const c = makeCursorCodec();
    c.observe(1999, "opaque-token");
    expect(c.cursorAfter(3999)).toBeUndefined();
  });
});
