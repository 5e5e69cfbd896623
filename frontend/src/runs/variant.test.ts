import { describe, expect, it } from "vitest";
import { parseOverrides, variantName } from "./variant";

describe("parseOverrides", () => {
  it("reads option-value pairs over lines, comments left out", () => {
    expect(parseOverrides("-gpgpu_n_clusters 64 # half\n-gpgpu_clock_domains 1455.0:1455.0:1455.0:850.0")).toEqual({
      overrides: [
        { option: "-gpgpu_n_clusters", value: "64" },
        { option: "-gpgpu_clock_domains", value: "1455.0:1455.0:1455.0:850.0" },
      ],
      error: null,
    });
    expect(parseOverrides("  \n")).toEqual({ overrides: [], error: null });
  });
  it("says what is wrong", () => {
    expect(parseOverrides("gpgpu_n_clusters 64").error).toMatch(/is not an option/);
    expect(parseOverrides("-gpgpu_n_clusters").error).toBe("-gpgpu_n_clusters has no value");
    expect(parseOverrides("-a 1 -a 2").error).toBe("-a is given twice");
  });
});

describe("variantName", () => {
  it("joins modifiers with hyphens", () => {
    expect(variantName("SM7_QV100", [])).toBe("SM7_QV100");
    expect(variantName("SM7_QV100", ["64SM", "1455MHZ"])).toBe("SM7_QV100-64SM-1455MHZ");
  });
});
