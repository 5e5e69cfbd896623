// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { CyclesChart } from "./CyclesChart";
import { FailureDetails, RunFiguresList, StatColumnPicker } from "./RunStats";
import type { StatCounter } from "./stats";

afterEach(cleanup);

const counters: StatCounter[] = [
  { name: "stall_gmem_resource", kind: "AGGREGATE", unit: "SM-cycles" },
  { name: "stall_shared_mem", kind: "AGGREGATE", unit: "SM-cycles" },
  { name: "sim_rate_insts", kind: "RATE", unit: "insts/s" },
  { name: "l2_read_hit_rate", kind: "DERIVED", unit: "fraction" },
];

describe("StatColumnPicker", () => {
  it("lists the run's counters by kind, with units, and reports what is picked", () => {
    let picked: string[] = ["l2_read_hit_rate"];
    const { rerender } = render(<StatColumnPicker counters={counters} picked={picked} onChange={(n) => (picked = n)} />);
    expect(screen.getByText("Statistics columns (1 shown)")).toBeTruthy();
    expect(screen.getByRole("group", { name: "Hit rates and ratios" })).toBeTruthy();
    const box = screen.getByRole("checkbox", { name: /sim_rate_insts/ }) as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(box.parentElement?.textContent).toContain("(insts/s)");
    fireEvent.click(box);
    expect(picked).toEqual(["l2_read_hit_rate", "sim_rate_insts"]);
    rerender(<StatColumnPicker counters={counters} picked={picked} onChange={(n) => (picked = n)} />);
    fireEvent.click(screen.getByRole("checkbox", { name: /l2_read_hit_rate/ }));
    expect(picked).toEqual(["sim_rate_insts"]);
  });

  it("shows nothing for a run without statistics", () => {
    const { container } = render(<StatColumnPicker counters={[]} picked={[]} onChange={() => {}} />);
    expect(container.textContent).toBe("");
  });
});

describe("CyclesChart", () => {
  it("draws a bar for the run and one per kernel, a segment per cause of the memory stage's stalls with its value", () => {
    render(
      <CyclesChart
        counters={counters}
        kernels={[
          { label: "#1 vecAdd", statValues: [30, 40, 5, 0.5] },
          { label: "#2 vecAdd", statValues: [0, 0, 5, 0.5] },
        ]}
      />,
    );
    const svg = screen.getByRole("img");
    expect(svg.querySelectorAll("g[data-row]").length).toBe(3);
    const titles = [...svg.querySelectorAll("rect.seg title")].map((t) => t.textContent);
    expect(titles).toContain("Run: stall_gmem_resource 30 SM-cycles (75.0 %)");
    expect(titles).toContain("#1 vecAdd: stall_other 10 SM-cycles (25.0 %)");
    expect(titles.some((t) => t?.includes("stall_shared_mem"))).toBe(false);
    const caption = screen.getByTestId("cycles-caption").textContent ?? "";
    expect(caption).toContain("summed over the SMs");
    expect(caption).not.toContain("100 %");
    // A kernel that never stalled has no segments.
    expect(svg.querySelector('g[data-row="#2 vecAdd"] rect')).toBeNull();
    fireEvent.click(screen.getByRole("radio", { name: "Warp states" }));
    expect(screen.getByText("This run's statistics have no such counters.")).toBeTruthy();
  });
});

describe("failure and figures", () => {
  it("name the failure class and quote the decisive line", () => {
    render(<FailureDetails failureClass="DEADLOCK" line="GPGPU-Sim uArch: ERROR ** deadlock detected" />);
    expect(screen.getByTestId("failure-class").textContent).toContain("Deadlock");
    expect(screen.getByLabelText("Decisive log line").textContent).toBe("GPGPU-Sim uArch: ERROR ** deadlock detected");
  });

  it("show the known figures, the sums shortened", () => {
    render(
      <RunFiguresList
        figures={{ coreClockMHz: null, wallSeconds: 75, simCycles: null, peakRssBytes: 3 * 1024 ** 3, simulatorBuild: "Accel-Sim [build x]", simulatorSum: null, configSum: "abcdef0123456789abcd", traceSum: null, traceCurrent: null }}
        counters={counters}
        totals={[30, 10, 200288, 0.5]}
      />,
    );
    expect(screen.getByTestId("wall-time").textContent).toContain("1 min 15 s");
    expect(screen.getByTestId("peak-memory").textContent).toContain("3.00 GiB");
    expect(screen.getByTestId("sim-rate").textContent).toContain("200,288");
    expect(screen.getByTestId("sim-build").textContent).toContain("Accel-Sim [build x]");
    expect(screen.getByText("abcdef012345").getAttribute("title")).toBe("SHA-256 abcdef0123456789abcd");
    expect(screen.queryByText("Trace sum")).toBeNull();
    expect(screen.queryByTestId("trace-changed")).toBeNull();
  });

  it("say when the trace was post-processed again since the run", () => {
    const figures = { coreClockMHz: null, wallSeconds: null, simCycles: null, peakRssBytes: null, simulatorBuild: null, simulatorSum: null, configSum: null, traceSum: "0123456789abcdef0123" };
    const { unmount } = render(<RunFiguresList figures={{ ...figures, traceCurrent: true }} counters={counters} totals={null} />);
    expect(screen.queryByTestId("trace-changed")).toBeNull();
    unmount();
    render(<RunFiguresList figures={{ ...figures, traceCurrent: false }} counters={counters} totals={null} />);
    expect(screen.getByTestId("trace-changed").textContent).toContain("post-processed again since this run launched");
  });
});
