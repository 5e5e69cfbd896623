import { describe, expect, it } from "vitest";
import { kernelSubset } from "./kernelSubset";

describe("kernelSubset", () => {
  it("says every kernel for a run of all", () => expect(kernelSubset(null, null)).toBe("every kernel"));
  it("counts the ids of one context", () => expect(kernelSubset([1, 2, 3], null)).toBe("3 chosen"));
  it("names a single context", () => expect(kernelSubset([4, 5], ["0x7f00aa", "0x7f00aa"])).toBe("2 chosen in CUDA context 0x7f00aa"));
  it("counts ids by context, in the run's order", () =>
    expect(kernelSubset([4, 5, 4, 1200], ["0x7f", "0x7f", "0x55", "0x7f"])).toBe("4 chosen in 2 CUDA contexts (0x7f: 3, 0x55: 1)"));
  it("groups thousands", () => expect(kernelSubset(Array.from({ length: 1200 }, (_, i) => i + 1), null)).toBe("1,200 chosen"));
});
