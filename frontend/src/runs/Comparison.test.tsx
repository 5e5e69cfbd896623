// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";

// uPlot draws on a canvas, which jsdom lacks; the chart's data is tested in compare.test.ts.
vi.mock("./ScatterChart", () => ({
  ScatterChart: ({ kernels }: { kernels: unknown[] }) => <div data-testid="scatter">{kernels.length} kernels</div>,
}));
vi.mock("../correlation/CounterScatter", () => ({ CounterScatter: () => null }));
const { Comparison } = await import("./RunPage");

afterEach(cleanup);

const kernels = [
  { kernelId: 1, context: null, name: "k1", demangledName: null, displayName: "k1", launchUid: 1, simCycles: 1755, simInstructions: 10, ipc: 1, simTimeNs: 1000, measuredNs: 800, errorPct: 25, truncated: false, statValues: [], simulated: null, projectedFrom: null, fullCycles: null, fullErrorPct: null },
  { kernelId: 2, context: null, name: "k2", demangledName: null, displayName: "k2", launchUid: 2, simCycles: 3510, simInstructions: 20, ipc: 1, simTimeNs: 2000, measuredNs: 2500, errorPct: -20, truncated: false, statValues: [], simulated: null, projectedFrom: null, fullCycles: null, fullErrorPct: null },
];
const trace = { id: "t", model: null, sourceGpu: null, traceGpuArch: "sm_90", hasRealTiming: true, hasStepTimeline: true };

describe("Comparison", () => {
  it("shows MAPE, correlation, totals, the scatter and projected steps", () => {
    render(
      <Comparison
        kernels={kernels}
        run={{
          trace,
          timingProblems: ["real_timing.json: row 3: kernel_id is not an integer"],
          comparison: { kernelsCompared: 2, mape: 22.5, correlation: 1, simTotalNs: 3000, measuredTotalNs: 3300 },
          steps: [{ step: 0, measuredNs: 1_000_000, projectedNs: 1_100_000 }],
        }}
      />,
    );
    expect(screen.getByTestId("mape").textContent).toContain("22.5 %");
    expect(screen.getByTestId("correlation").textContent).toContain("1.000");
    expect(screen.getByText("3.00 µs")).toBeTruthy();
    expect(screen.getByText("3.30 µs")).toBeTruthy();
    expect(screen.getByTestId("scatter").textContent).toBe("2 kernels");
    expect(screen.queryByTestId("scatter-partial")).toBeNull();
    const steps = screen.getByRole("table", { name: "Projected step times" });
    expect(steps.textContent).toContain("1.10 ms");
    expect(steps.textContent).toContain("+10.0 %");
    expect(screen.getByText(/kernel_id is not an integer/)).toBeTruthy();
  });

  it("says why there is nothing to compare", () => {
    render(<Comparison kernels={kernels} run={{ trace: { ...trace, hasRealTiming: false }, timingProblems: [], comparison: null, steps: [] }} />);
    expect(screen.getByText(/no real timing/)).toBeTruthy();
    expect(screen.queryByTestId("scatter")).toBeNull();
  });

  it("points a finished run without a comparison at its timing problems, and a running one waits", () => {
    const problem = "no simulated times: the run's core clock was not recorded (it ran before clocks were), and its config SM90_H100 is no longer in CASCADE_SIM_CONFIGS_DIR";
    const run = { trace, timingProblems: [problem], comparison: null, steps: [] };
    render(<Comparison run={run} kernels={kernels} />);
    expect(screen.getByText(/No kernel could be compared: see the timing problems below/)).toBeTruthy();
    expect(screen.getByTestId("timing-problems").textContent).toContain("Timing problems (1)");
    expect(screen.getByTestId("timing-problems").textContent).toContain("no longer in CASCADE_SIM_CONFIGS_DIR");
    expect(screen.queryByText(/No kernel has been compared yet/)).toBeNull();
    cleanup();
    render(<Comparison run={run} kernels={kernels} over={false} />);
    expect(screen.getByText("No kernel has been compared yet.")).toBeTruthy();
  });

  it("says the scatter has the kernels read so far when the run has more", () => {
    const comparison = { kernelsCompared: 2, mape: 22.5, correlation: 1, simTotalNs: 3000, measuredTotalNs: 3300 };
    render(<Comparison kernels={kernels} kernelTotal={600} run={{ trace, timingProblems: [], comparison, steps: [] }} />);
    expect(screen.getByTestId("scatter-partial").textContent).toMatch(/first 2 of 600 kernels/);
  });
});
