import { describe, expect, it } from "vitest";
import { kernelMatches } from "./KernelName";

const rms = {
  name: "_ZN4vllm15rms_norm_kernelIN3c108BFloat16EEEvPT_PKS3_S6_fii",
  displayName: "vllm::rms_norm_kernel<c10::BFloat16>",
  demangledName: "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)",
};

describe("kernelMatches", () => {
  it("matches the mangled, shown and demangled names, case-insensitively", () => {
    expect(kernelMatches(rms, "15rms_norm")).toBe(true);
    expect(kernelMatches(rms, "vllm::RMS_NORM")).toBe(true);
    expect(kernelMatches(rms, "float, int")).toBe(true);
    expect(kernelMatches(rms, "  ")).toBe(true);
    expect(kernelMatches(rms, "gemm")).toBe(false);
    expect(kernelMatches({ name: "vecAdd", displayName: "vecAdd", demangledName: null }, "vecadd")).toBe(true);
  });
});
