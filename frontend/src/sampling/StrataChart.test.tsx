// @vitest-environment jsdom
import { afterEach, expect, test } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { MAX_ROWS, StrataChart } from "./StrataChart";

afterEach(cleanup);

const stratum = (i: number, mean: number | null, size: number, reps: (number | null)[]) => ({
  name: `_Z1k${i}`,
  displayName: `k${i}`,
  grid: { x: i, y: 1, z: 1 },
  block: { x: 128, y: 1, z: 1 },
  size,
  meanDurationNs: mean,
  cvDuration: mean == null ? null : 0.1,
  meanInstructions: 100 * i,
  cvInstructions: 0,
  why: "NEYMAN" as const,
  allocation: reps.length,
  cost: 100 * i * reps.length,
  varianceShare: 0.1,
  representatives: reps.map((d, j) => ({
    launch: i * 10 + j,
    kernelId: i * 10 + j + 1,
    context: null,
    weight: size / reps.length,
    durationNs: d,
    instructions: 100 * i,
    warmup: [],
  })),
});

test("durations spread widely: log scale, a row a timed stratum, a triangle a timed representative", () => {
  const strata = [stratum(1, 1000, 40, [990, 1010]), stratum(2, 500_000, 4, [500_000]), stratum(3, null, 7, [null])];
  render(<StrataChart strata={strata} basis="DURATION" />);
  const fig = screen.getByTestId("strata-chart");
  expect(fig.getAttribute("data-scale")).toBe("log");
  expect(fig.getAttribute("aria-label")).toBe("2 strata along measured duration, log scale");
  expect(screen.getAllByTestId("stratum-row")).toHaveLength(2);
  expect(screen.getAllByTestId("rep-marker")).toHaveLength(3);
  expect(fig.textContent).toContain("1 strata without a measured duration are not on the chart");
});

test("an INSTRUCTIONS plan charts every stratum along warp instructions; only the largest strata are drawn", () => {
  const strata = Array.from({ length: MAX_ROWS + 5 }, (_, i) => stratum(i + 1, null, i + 1, [null]));
  render(<StrataChart strata={strata} basis="INSTRUCTIONS" />);
  const fig = screen.getByTestId("strata-chart");
  expect(fig.getAttribute("aria-label")).toBe(`${MAX_ROWS} strata along warp instructions, linear scale`) // 600 to 6,500: within 20×;
  expect(screen.getAllByTestId("stratum-row")).toHaveLength(MAX_ROWS);
  expect(screen.getAllByTestId("rep-marker")).toHaveLength(MAX_ROWS);
  expect(fig.textContent).toContain(`The ${MAX_ROWS} largest of ${MAX_ROWS + 5} strata are shown.`);
});
