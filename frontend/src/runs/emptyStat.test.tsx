// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { emptyStatNote } from "./emptyStat";
import { RunKernelsTable } from "./RunKernelsTable";
import { StatColumnPicker } from "./RunStats";
import type { StatCounter } from "./stats";

afterEach(cleanup);

const counters: StatCounter[] = [
  { name: "occupancy", kind: "KERNEL", unit: "%" },
  { name: "ipc", kind: "KERNEL", unit: "insts/cycle" },
];
const kernel = { kernelId: 1, context: null, name: "k1", demangledName: null, displayName: "k1", launchUid: 1, simCycles: 10, simInstructions: 20, ipc: 2, simTimeNs: null, measuredNs: null, errorPct: null, truncated: false, statValues: [null, 2], simulated: null, projectedFrom: null, fullCycles: null, fullErrorPct: null };

describe("an empty statistics column", () => {
  it("says why where the column is: occupancy is -nan in this simulator's log", () => {
    expect(emptyStatNote("occupancy", null, 3)).toMatch(/prints -nan/);
    expect(emptyStatNote("ipc", null, 3)).toMatch(/no number/);
    expect(emptyStatNote("occupancy", 83, 3)).toBeNull();
    expect(emptyStatNote("occupancy", null, 0)).toBeNull();
    render(<RunKernelsTable kernels={[kernel]} columns={counters.map((counter, index) => ({ counter, index }))} totals={[null, 2]} />);
    const head = screen.getAllByRole("columnheader").find((h) => h.textContent?.startsWith("occupancy"));
    expect(head?.textContent).toContain("-nan");
    expect(screen.getAllByRole("columnheader").find((h) => h.textContent?.startsWith("ipc"))?.textContent).not.toContain("empty");
  });

  it("and in the picker, which files the simulator's per-kernel figures as such, not as measured", () => {
    render(<StatColumnPicker counters={counters} picked={[]} onChange={() => {}} totals={[null, 2]} kernels={1} />);
    expect(screen.getByText("The simulator's per-kernel figures")).toBeTruthy();
    expect(screen.queryByText(/Measured/)).toBeNull();
    expect(screen.getByText(/prints -nan/)).toBeTruthy();
  });
});
