// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { RunKernelsTable } from "./RunKernelsTable";
import { runRow } from "./runRow";
import type { StatCounter } from "./stats";

afterEach(cleanup);

const counters: StatCounter[] = [
  { name: "instructions", kind: "AGGREGATE", unit: "thread-insts" },
  { name: "cycles", kind: "AGGREGATE", unit: "cycles" },
  { name: "l2_read_hit_rate", kind: "DERIVED", unit: "fraction" },
];
const kernel = { kernelId: 1, context: null, name: "k1", demangledName: null, displayName: "k1", launchUid: 1, simCycles: 1417, simInstructions: 2834, ipc: 2, simTimeNs: 1000, measuredNs: 800, errorPct: 25, truncated: false, statValues: [2834, 1417, 0.5], simulated: null, projectedFrom: null, fullCycles: null, fullErrorPct: null };

describe("the kernels table's Run row", () => {
  it("totals cycles, instructions, IPC, simulated and measured time and the error", () => {
    const r = runRow(counters, [2834, 1417, 0.5], 1417, { simTotalNs: 1000, measuredTotalNs: 800 });
    expect(r).toEqual({ cycles: 1417, instructions: 2834, ipc: 2, simNs: 1000, measuredNs: 800, errorPct: 25 });
    expect(runRow(counters, null, null, null)).toEqual({ cycles: null, instructions: null, ipc: null, simNs: null, measuredNs: null, errorPct: null });
  });

  it("shows them in the table, not empty cells", () => {
    render(
      <RunKernelsTable
        kernels={[kernel]}
        columns={[{ counter: counters[2], index: 2 }]}
        totals={[2834, 1417, 0.5]}
        run={runRow(counters, [2834, 1417, 0.5], 1417, { simTotalNs: 1000, measuredTotalNs: 800 })}
      />,
    );
    const cells = Array.from(screen.getByTestId("stat-totals").querySelectorAll("[role=cell]")).map((c) => c.textContent);
    expect(cells).toEqual(["Run", "all 1 kernels", "", "1,417", "2,834", "2.00", "1.00 µs", "800 ns", "+25.0 %", "50.0 %"]);
  });
});
