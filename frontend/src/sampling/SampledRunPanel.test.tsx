// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { SampledRunPanel, checkable } from "./SampledRunPanel";
import { runSummary } from "./runSummary.testdata";

afterEach(cleanup);

const summary = (id: string, state: string, done: number, total: number) => runSummary(id, state, done, total, "SM90_H100");

const sampling = {
  plan: { id: "p1", method: "STEM" as const, errorBound: 0.05, samples: 8, warmup: 1, warmupStep: false },
  segments: [summary("s1", "SUCCEEDED", 3, 3), summary("s2", "RUNNING", 1, 2)],
  representatives: 8,
  simulatedLaunches: 15,
  simulatedInstructions: 1260,
  simulatedFraction: 0.318,
  projectedCycles: null as number | null,
  ciLowCycles: null as number | null,
  ciHighCycles: null as number | null,
  expectedError: null as number | null,
  projectedNs: null as number | null,
  simulatorSeconds: 2,
  fullRunSecondsEstimate: 50,
  validationRun: summary("full", "RUNNING", 10, 48),
  check: null,
};
const run = { id: "r", state: "RUNNING" as const, simConfig: { name: "SM90_H100" }, trace: { id: "t", model: null, sourceGpu: null, traceGpuArch: "sm_90", hasRealTiming: true, hasStepTimeline: false }, progress: { kernelsDone: 5, kernelsTotal: 8 } };

describe("SampledRunPanel", () => {
  it("while segments run: representatives simulated, the fraction, the speed-up, segments, the validation run, no check yet", () => {
    render(<SampledRunPanel run={run} sampling={sampling} />);
    expect(screen.getByTestId("sampled-progress").textContent).toContain("5 / 8");
    expect(screen.getByTestId("sampled-fraction").textContent).toContain("31.8 %");
    expect(screen.getByTestId("projected-cycles").textContent).toContain("when every segment has succeeded");
    expect(screen.getByTestId("simulator-time").textContent).toContain("2.00 s");
    expect(screen.getByTestId("simulator-time").textContent).toContain("×25.0");
    expect(screen.getByTestId("segments-summary").textContent).toContain("Segments (2): 1 succeeded · 1 running");
    expect(screen.getAllByTestId("segment")).toHaveLength(2);
    expect(screen.getByTestId("validation-run").textContent).toContain("10 of 48 kernels");
    expect(screen.getByTestId("no-check").textContent).toMatch(/appears when the validation run/);
  });

  it("done and checked: the projection with its interval and the check's figures", () => {
    const done = {
      ...sampling,
      projectedCycles: 1_234_567.4,
      ciLowCycles: 1_200_000,
      ciHighCycles: 1_270_000,
      expectedError: 0.028,
      projectedNs: 700_000,
      check: {
        fullRun: { id: "full", label: null, state: "SUCCEEDED" as const },
        fullCycles: 1_250_000,
        totalErrorPct: -1.23,
        beyondLatencyErrorPct: -4.5,
        launchLatencyCycles: 5000,
        insideInterval: true,
        kernelMape: 3.2,
        maxKernelErrorPct: 9.9,
        kernelsCompared: 48,
        measuredMape: 12.5,
        fullMeasuredMape: 11.0,
      },
    };
    render(<SampledRunPanel run={{ ...run, progress: { kernelsDone: 8, kernelsTotal: 8 } }} sampling={done} />);
    // The validation run still runs: the full run's time is the estimate.
    expect(screen.getByTestId("simulator-time").textContent).toContain("a full run would take");
    expect(screen.getByTestId("projected-cycles").textContent).toContain("1,234,567");
    expect(screen.getByTestId("projected-cycles").textContent).toContain("1,200,000 – 1,270,000 (±2.80 %)");
    expect(screen.getByTestId("projected-time").textContent).toContain("700 µs");
    expect(screen.getByTestId("check-total-error").textContent).toContain("−1.2 %");
    expect(screen.getByTestId("check-total-error").textContent).toContain("1,250,000 cycles");
    expect(screen.getByTestId("check-beyond-latency").textContent).toContain("5,000 cycles a launch");
    expect(screen.getByTestId("check-inside").textContent).toContain("inside");
    expect(screen.getByTestId("check-kernel-mape").textContent).toContain("3.2 %");
    expect(screen.getByTestId("check-kernel-mape").textContent).toContain("max 9.9 %");
    expect(screen.getByTestId("check-measured-mape").textContent).toContain("12.5 % / 11.0 %");
  });
});

describe("checkable", () => {
  const done = { state: "SUCCEEDED" as const, simConfig: { name: "SM90_H100" } };
  const ok = (id: string, state = "SUCCEEDED", config = "SM90_H100") => ({ id, state: state as "SUCCEEDED", simConfig: { name: config } });
  it("a succeeded full run of the config, or the validation run, while there is no check; before the sampled run's own success too", () => {
    expect(checkable(ok("x"), { simConfig: done.simConfig }, sampling)).toBe(true);
    expect(checkable(ok("full"), done, sampling)).toBe(true);
    expect(checkable(ok("other", "SUCCEEDED", "SM7_QV100"), done, sampling)).toBe(false);
    expect(checkable(ok("s1"), done, sampling)).toBe(false); // a segment
    expect(checkable(ok("x", "RUNNING"), done, sampling)).toBe(false);
    expect(checkable(ok("x"), done, { ...sampling, check: {} as never })).toBe(false);
  });

  it("once the validation run has succeeded, the speed-up is against its measured time, not the estimate", () => {
    const validated = { ...sampling, validationRun: { ...summary("full", "SUCCEEDED", 48, 48), figures: { wallSeconds: 150, simCycles: 1_250_000 } } };
    render(<SampledRunPanel run={run} sampling={validated} />);
    const t = screen.getByTestId("simulator-time").textContent ?? "";
    expect(t).toContain("the full run took");
    expect(t).toContain("×75.0");
  });
});
