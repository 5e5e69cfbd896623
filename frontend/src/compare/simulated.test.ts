import { expect, test } from "vitest";
import { simulatedNs, simulatedTable } from "./simulated";

const cols = [
  { name: "instructions", unit: "thread-insts" },
  { name: "cycles", unit: "cycles" },
  { name: "l2_read_hits", unit: "accesses" },
];

test("simulatedTable sets the configs' cycles, time, IPC and statistics side by side", () => {
  const t = simulatedTable([
    { simConfig: "A", run: { statCounters: cols, statTotals: [2000, 1000, 7], figures: { coreClockMHz: 1000 } } },
    { simConfig: "B", run: null },
    { simConfig: "C", run: { statCounters: [...cols, { name: "dram_reads", unit: "requests" }], statTotals: [3000, 500, null, 4], figures: { coreClockMHz: 2000 } } },
  ]);
  expect(t.map((s) => s.name)).toEqual(["cycles", "time", "IPC", "instructions", "l2_read_hits", "dram_reads"]);
  expect(t[0].values).toEqual([1000, null, 500]);
  expect(t[1].values).toEqual([1000, null, 250]); // ns at each config's clock
  expect(t[2].values).toEqual([2, null, 6]);
  expect(t[4].values).toEqual([7, null, null]); // C printed none
  expect(t[5].values).toEqual([null, null, 4]);
});

test("simulatedTable without a clock has no time", () => {
  const t = simulatedTable([{ simConfig: "A", run: { statCounters: cols, statTotals: [1, 2, 3], figures: {} } }]);
  expect(t[1].values).toEqual([null]);
});

test("simulatedTable sets energy, average power and performance per watt beside time when a run has power", () => {
  const power = [...cols, { name: "power", unit: "W" }, { name: "energy", unit: "J" }, { name: "insts_per_joule", unit: "insts/J" }];
  const t = simulatedTable([
    { simConfig: "A", run: { statCounters: power, statTotals: [2000, 1000, 7, 90, 0.0001, 2e7], figures: { coreClockMHz: 1000 } } },
    { simConfig: "B", run: { statCounters: cols, statTotals: [2000, 500, 7], figures: { coreClockMHz: 1000 } } },
  ]);
  expect(t.map((s) => s.name)).toEqual(["cycles", "time", "IPC", "energy", "average power", "performance per watt", "instructions", "l2_read_hits", "power"]);
  expect(t[3].values).toEqual([0.0001, null]);
  expect(t[4].values[0]).toBeCloseTo(100); // 0.0001 J over 1000 ns
  expect(t[4].values[1]).toBeNull();
  expect(t[5].values).toEqual([2e7, null]);
});

test("simulatedTable without power has no energy", () => {
  const t = simulatedTable([{ simConfig: "A", run: { statCounters: cols, statTotals: [1, 2, 3], figures: { coreClockMHz: 1000 } } }]);
  expect(t.map((s) => s.name)).toEqual(["cycles", "time", "IPC", "instructions", "l2_read_hits"]);
});

test("simulatedNs is a run's cycles at its config's clock, null without a run, cycles or clock", () => {
  expect(simulatedNs({ simConfig: "A", run: { statCounters: cols, statTotals: [2000, 11789, 7], figures: { coreClockMHz: 1417 } } })).toBeCloseTo(8319.69, 2);
  expect(simulatedNs({ simConfig: "B", run: null })).toBeNull();
  expect(simulatedNs({ simConfig: "C", run: { statCounters: cols, statTotals: [1, 2, 3], figures: {} } })).toBeNull();
  expect(simulatedNs({ simConfig: "D", run: { statCounters: cols, statTotals: [1, null, 3], figures: { coreClockMHz: 1000 } } })).toBeNull();
});
