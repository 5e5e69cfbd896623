// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { SplitRunPanel, segmentLaunches } from "./SplitRunPanel";
import { runSummary } from "./runSummary.testdata";

afterEach(cleanup);

const summary = runSummary;

const split = {
  segments: [summary("s1", "SUCCEEDED", 100, 100), summary("s2", "RUNNING", 30, 108), summary("s3", "QUEUED", 0, 100)],
  segmentStarts: [0, 100, 200],
  launches: 292,
  warmup: 8,
  period: 8,
  simulatorSeconds: 0,
};
const run = { id: "r", trace: { id: "t", model: null, sourceGpu: null, traceGpuArch: "sm_70", hasRealTiming: true, hasStepTimeline: false } };

describe("SplitRunPanel", () => {
  it("while segments run: how it was cut, segments succeeded, each segment's launches and state", () => {
    render(<SplitRunPanel run={run} split={split} />);
    expect(screen.getByTestId("split-how").textContent).toMatch(/3 segments .* 8 launches of warm-up \(a step of the trace is 8\)/);
    expect(screen.getByTestId("split-progress").textContent).toContain("1 / 3");
    expect(screen.getByTestId("split-simulator-time").textContent).toContain("—");
    expect(screen.getByTestId("split-segments-summary").textContent).toContain("Segments (3): 1 succeeded · 1 running · 1 queued");
    const segs = screen.getAllByTestId("split-segment");
    expect(segs).toHaveLength(3);
    expect(segs[1].textContent).toContain("launches 100–199");
    expect(segs[2].textContent).toContain("launches 200–291");
  });

  it("segmentLaunches: the last segment ends at the trace's last launch", () => {
    expect(segmentLaunches(split, 0)).toBe("launches 0–99");
    expect(segmentLaunches(split, 2)).toBe("launches 200–291");
    expect(segmentLaunches(split, 5)).toBe("");
  });
});
