import { describe, expect, it } from "vitest";
import { archToComputeCapability, cannotLaunchReason, isCompatible, pickDefaultConfig } from "./defaultConfig";

const configs = [
  { name: "SM7_QV100", computeCapability: "7.0" },
  { name: "SM90_H100", computeCapability: "9.0" },
  { name: "SM90_H100_BROKEN", computeCapability: "9.0", error: "missing trace.config" },
  { name: "SM90_GH200", computeCapability: "9.0" },
];

describe("pickDefaultConfig", () => {
  it("takes the suggested config when it is compatible", () => {
    expect(pickDefaultConfig(configs, { traceGpuArch: "sm_90", suggestedSimConfig: "SM90_GH200" })?.name).toBe("SM90_GH200");
  });
  it("takes the first compatible one when nothing is suggested", () => {
    expect(pickDefaultConfig(configs, { traceGpuArch: "sm_90", suggestedSimConfig: null })?.name).toBe("SM90_H100");
  });
  it("ignores a suggestion that is incompatible or broken", () => {
    expect(pickDefaultConfig(configs, { traceGpuArch: "sm_90", suggestedSimConfig: "SM7_QV100" })?.name).toBe("SM90_H100");
    expect(pickDefaultConfig(configs, { traceGpuArch: "sm_90", suggestedSimConfig: "SM90_H100_BROKEN" })?.name).toBe("SM90_H100");
  });
  it("is null when no config fits", () => {
    expect(pickDefaultConfig(configs, { traceGpuArch: "sm_120" })).toBeNull();
    expect(pickDefaultConfig([], { traceGpuArch: "sm_90" })).toBeNull();
  });
});

describe("compatibility", () => {
  it("maps arch names to compute capabilities", () => {
    expect(archToComputeCapability("sm_90")).toBe("9.0");
    expect(archToComputeCapability("sm_90a")).toBe("9.0");
    expect(archToComputeCapability("sm_120")).toBe("12.0");
    expect(archToComputeCapability("sm_7")).toBeNull();
    expect(archToComputeCapability("hopper")).toBeNull();
  });
  it("a config with an error is never compatible", () => {
    expect(isCompatible(configs[2], "sm_90")).toBe(false);
    expect(isCompatible(configs[1], "sm_90")).toBe(true);
  });
});

describe("cannotLaunchReason", () => {
  it("explains why sample and not-ready traces cannot launch", () => {
    expect(cannotLaunchReason({ state: "READY", sample: true })).toMatch(/sample/);
    expect(cannotLaunchReason({ state: "UPLOADING", sample: false })).toMatch(/uploading/);
    expect(cannotLaunchReason({ state: "READY", sample: false })).toBeNull();
    expect(cannotLaunchReason({ state: "READY", sample: false, notSimulatableReason: "it needs 90" })).toMatch(
      /cannot run this trace: it needs 90/,
    );
  });
});
