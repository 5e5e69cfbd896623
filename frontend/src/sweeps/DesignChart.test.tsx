// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { DesignChart } from "./DesignChart";
import { axisChart, type DesignCell } from "./design";

afterEach(cleanup);

const cell = (values: string[], timeNs: number | null, extra: Partial<DesignCell> = {}): DesignCell => ({
  simConfig: values.join(" "),
  base: "SM7_QV100",
  values,
  shipped: false,
  runs: 1,
  succeeded: 1,
  timeNs,
  sampled: 0,
  ...extra,
});

describe("DesignChart", () => {
  it("draws a point per timed cell, a line per combination of the others, a sampled cell's interval as an error bar", () => {
    const axes = [{ option: "-gpgpu_n_clusters", values: ["20", "40"] }, { values: ["", "1455MHZ"] }];
    const cells = [
      cell(["20", ""], 900, { sampled: 1, timeLowNs: 800, timeHighNs: 1000 }),
      cell(["20", "1455MHZ"], 700),
      cell(["40", ""], 500),
      cell(["40", "1455MHZ"], null),
    ];
    const { container } = render(<DesignChart chart={axisChart(axes, cells, 0)} />);
    const svg = screen.getByRole("img", { name: "Simulated time against -gpgpu_n_clusters" });
    expect(svg.querySelectorAll("circle")).toHaveLength(3);
    expect(svg.querySelectorAll("polyline")).toHaveLength(1); // the line of one point draws none
    expect(svg.querySelectorAll('[data-testid="interval"]')).toHaveLength(1);
    expect(svg.querySelector('[data-cell="0"] title')?.textContent).toMatch(/95 % interval 800 ns – 1.00 µs/);
    expect(container.querySelector("figcaption")?.textContent).toContain("modifier 1455MHZ");
  });

  it("says when no cell has a time yet", () => {
    render(<DesignChart chart={axisChart([{ option: "-x", values: ["1"] }], [cell(["1"], null)], 0)} />);
    expect(screen.getByText("no cell has a simulated time yet")).toBeTruthy();
  });
});
