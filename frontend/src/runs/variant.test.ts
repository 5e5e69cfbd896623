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
  it("reads a value of several words in double quotes, as the server writes it in a variant's name", () => {
    // simconfig's TestVariantNameRoundTrips writes these names; the picker must read them back alike.
    expect(parseOverrides('-gpgpu_scheduler "lrr gto" -gpgpu_n_clusters 40').overrides).toEqual([
      { option: "-gpgpu_scheduler", value: "lrr gto" },
      { option: "-gpgpu_n_clusters", value: "40" },
    ]);
    expect(parseOverrides('-a "x   y"\n-b "z"').overrides).toEqual([
      { option: "-a", value: "x y" },
      { option: "-b", value: "z" },
    ]);
    expect(parseOverrides('-a "one\ntwo" -b 1').overrides).toEqual([
      { option: "-a", value: "one two" },
      { option: "-b", value: "1" },
    ]);
    expect(parseOverrides('-a "x y').overrides).toEqual([{ option: "-a", value: "x y" }]);
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
