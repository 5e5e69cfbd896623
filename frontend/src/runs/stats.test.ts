import { describe, expect, it } from "vitest";
import { COLUMNS_KEY, DEFAULT_COLUMNS, breakdownBars, formatStat, loadColumns, pickedColumns, saveColumns, shortSum, statOf, type StatCounter } from "./stats";

function memory(init: Record<string, string> = {}) {
  const map = new Map(Object.entries(init));
  return { map, getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v) };
}

const counters: StatCounter[] = [
  { name: "cycles", kind: "AGGREGATE", unit: "cycles" },
  { name: "stall_dram_full", kind: "AGGREGATE", unit: "cycles" },
  { name: "stall_shared_mem", kind: "AGGREGATE", unit: "cycles" },
  { name: "warp_state_idle", kind: "AGGREGATE", unit: "cycles" },
  { name: "ipc", kind: "KERNEL", unit: "insts/cycle" },
  { name: "l2_read_hit_rate", kind: "DERIVED", unit: "fraction" },
];

describe("picked columns", () => {
  it("are the defaults until picked, then what was picked, even none", () => {
    const s = memory();
    expect(loadColumns(s)).toEqual(DEFAULT_COLUMNS);
    saveColumns(["ipc", "cycles"], s);
    expect(s.map.get(COLUMNS_KEY)).toBe('["ipc","cycles"]');
    expect(loadColumns(s)).toEqual(["ipc", "cycles"]);
    saveColumns([], s);
    expect(loadColumns(s)).toEqual([]);
    expect(loadColumns(memory({ [COLUMNS_KEY]: "{not json" }))).toEqual(DEFAULT_COLUMNS);
    expect(loadColumns(null)).toEqual(DEFAULT_COLUMNS);
  });

  it("keep the run's order and skip counters the run does not have", () => {
    expect(pickedColumns(counters, ["l2_read_hit_rate", "nope", "cycles"])).toEqual([
      { counter: counters[0], index: 0 },
      { counter: counters[5], index: 5 },
    ]);
  });
});

describe("formatStat", () => {
  it("shows fractions as percentages, counts whole, absent as a dash", () => {
    expect(formatStat(0.8395, "fraction")).toBe("84.0 %");
    expect(formatStat(83.125, "%")).toBe("83.1 %");
    expect(formatStat(2203168, "cycles")).toBe("2,203,168");
    expect(formatStat(186.8834, "insts/cycle")).toBe("186.88");
    expect(formatStat(0.01234, "x")).toBe("0.0123");
    expect(formatStat(null, "cycles")).toBe("—");
    expect(formatStat(NaN, "cycles")).toBe("—");
  });

  it("statOf finds a counter's value by name", () => {
    expect(statOf(counters, [1, 2, 3, 4, 5, 0.5], "ipc")).toBe(5);
    expect(statOf(counters, [1, 2, 3, 4, null, 0.5], "ipc")).toBeNull();
    expect(statOf(counters, null, "ipc")).toBeNull();
    expect(statOf(counters, [1], "nope")).toBeNull();
    expect(shortSum("0123456789abcdef0123")).toBe("0123456789ab");
    expect(shortSum(null)).toBe("—");
  });
});

describe("breakdownBars", () => {
  it("stacks the memory stage's stalls by cause, each bar stall_shared_mem, which its parts add up to", () => {
    // SM7_QV100's vecAdd: gpgpu_n_stall_shd_mem 304,568 = gmem resource 255,896 + gmem
    // coalescing 48,672. Summed beside them (and beside dram_full), "shared mem" was counted twice.
    const qv: StatCounter[] = [
      { name: "cycles", kind: "AGGREGATE", unit: "cycles" },
      { name: "stall_dram_full", kind: "AGGREGATE", unit: "partition-cycles" },
      { name: "stall_shared_mem", kind: "AGGREGATE", unit: "SM-cycles" },
      { name: "stall_gmem_resource", kind: "AGGREGATE", unit: "SM-cycles" },
      { name: "stall_gmem_coalescing", kind: "AGGREGATE", unit: "SM-cycles" },
      { name: "stall_smem_bank_conflict", kind: "AGGREGATE", unit: "SM-cycles" },
    ];
    const vecAdd = [11789, 73726, 304568, 255896, 48672, 0];
    const { series, rows } = breakdownBars(qv, [{ label: "vecAdd", statValues: vecAdd }], "stalls");
    expect(series.map((s) => s.name)).toEqual(["stall_gmem_resource", "stall_gmem_coalescing", "stall_smem_bank_conflict"]);
    expect(rows).toEqual([
      { label: "Run", values: [255896, 48672, 0], total: 304568 },
      { label: "vecAdd", values: [255896, 48672, 0], total: 304568 },
    ]);
    // What the parts leave of the total is "other"; the run's bar is its totals when given.
    const more = breakdownBars(qv, [{ label: "k", statValues: [1, 0, 100, 60, 30, null] }], "stalls", 40, [1, 0, 110, 60, 30, 0]);
    expect(more.series.map((s) => s.name)).toEqual(["stall_gmem_resource", "stall_gmem_coalescing", "stall_smem_bank_conflict", "stall_other"]);
    expect(more.rows).toEqual([
      { label: "Run", values: [60, 30, 0, 20], total: 110 },
      { label: "k", values: [60, 30, 0, 10], total: 100 },
    ]);
  });

  it("stacks the warp states", () => {
    const kernels = [
      { label: "k1", statValues: [100, 10, 30, 7, 1, 0.5] },
      { label: "k2", statValues: [200, null, 60, 8, 1, 0.5] },
    ];
    const warps = breakdownBars(counters, kernels, "warps", 1);
    expect(warps.series.map((s) => s.name)).toEqual(["warp_state_idle"]);
    expect(warps.rows.map((r) => r.label)).toEqual(["Run", "k1"]);
    expect(warps.rows[0].total).toBe(15);
  });
});
