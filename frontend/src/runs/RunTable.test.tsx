// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, within } from "@testing-library/react";
import type { RunSummaryFragment } from "../gql/graphql";
import { RunTable } from "./RunTable";

afterEach(cleanup);

const run: RunSummaryFragment = {
  id: "r1",
  state: "RUNNING" as RunSummaryFragment["state"],
  label: "my run",
  error: null,
  failureClass: null,
  createdAt: "2026-01-02T03:04:05Z",
  updatedAt: "2026-01-02T03:04:06Z",
  startedAt: null,
  finishedAt: null,
  simConfig: { name: "SM90_H100" },
  trace: { id: "t1", model: null },
  progress: { kernelsDone: 1500, kernelsTotal: 3000 },
  sweep: { id: "s1", label: "my sweep" },
  figures: { wallSeconds: null, simCycles: null },
  sampling: null,
  sampledBy: null,
};

const headers = (name: string) =>
  within(screen.getByRole("table", { name }))
    .getAllByRole("columnheader")
    .map((h) => h.textContent);

describe("RunTable", () => {
  it("lists every run with its trace, sweep, progress and creation", () => {
    render(<RunTable of="all" rows={[run]} />);
    expect(headers("Runs")).toEqual(["State", "Run", "Trace", "Config", "Sweep", "Progress", "Cycles", "Wall time", "Created"]);
    const row = screen.getByRole("table", { name: "Runs" }).querySelector('tr[data-run-id="r1"][data-state="RUNNING"]');
    expect(row).toBeTruthy();
    expect(within(row as HTMLElement).getByRole("link", { name: "my run" }).getAttribute("href")).toBe("/runs/r1");
    expect(within(row as HTMLElement).getByRole("link", { name: "my sweep" })).toBeTruthy();
    expect(row?.textContent).toContain("1,500 / 3,000 (50 %)");
    expect(screen.queryByRole("button", { name: "Show more runs" })).toBeNull();
  });

  it("shows each run's cycles and wall time and marks a sampled run, its cycles projected", () => {
    const done = { ...run, id: "r3", state: "SUCCEEDED" as RunSummaryFragment["state"], figures: { wallSeconds: 12.3, simCycles: 1234567 } };
    const sampled = { ...run, id: "r2", state: "SUCCEEDED" as RunSummaryFragment["state"], figures: { wallSeconds: 75, simCycles: 98765 }, sampling: { representatives: 12 } };
    render(<RunTable of="all" rows={[run, sampled, done]} />);
    const table = screen.getByRole("table", { name: "Runs" });
    const cells = (id: string) => {
      const tr = table.querySelector(`tr[data-run-id="${id}"]`) as HTMLElement;
      const td = tr.querySelectorAll("td");
      return { tr, cycles: td[6].textContent, wall: td[7].textContent };
    };
    const r1 = cells("r1");
    expect(within(r1.tr).queryByTestId("sampled-run")).toBeNull();
    expect(within(r1.tr).queryByTestId("run-cycles")).toBeNull();
    expect([r1.cycles, r1.wall]).toEqual(["—", "—"]);
    const r2 = cells("r2");
    expect(within(r2.tr).getByTestId("sampled-run").textContent).toBe("sampled");
    expect(within(r2.tr).getByTestId("sampled-run").getAttribute("title")).toContain("12 representative launches simulated");
    expect([r2.cycles, r2.wall]).toEqual(["≈ 98,765", "1 min 15 s"]);
    expect(within(r2.tr).getByTestId("run-cycles").getAttribute("title")).toContain("Projected");
    const r3 = cells("r3");
    expect(within(r3.tr).queryByTestId("sampled-run")).toBeNull();
    expect([r3.cycles, r3.wall]).toEqual(["1,234,567", "12 s"]);
    expect(within(r3.tr).getByTestId("run-cycles").getAttribute("data-projected")).toBeNull();
  });

  it("tells the runs of a sweep apart, which carry its label, by trace and config", () => {
    const sibling = { ...run, id: "r2", label: "my sweep", simConfig: { name: "SM86_RTX3070" } };
    render(<RunTable of="all" rows={[{ ...run, label: "my sweep" }, sibling]} />);
    const names = screen.getAllByRole("row").slice(1).map((tr) => tr.querySelectorAll("td")[1].textContent);
    expect(names).toEqual(["my sweep · t1 · SM90_H100", "my sweep · t1 · SM86_RTX3070"]);
  });

  it("leaves out the trace column for a trace's runs", () => {
    render(<RunTable of="trace" rows={[run]} />);
    expect(headers("Runs")).toEqual(["State", "Run", "Config", "Sweep", "Progress", "Cycles", "Wall time", "Created"]);
  });

  it("names a sweep's runs by id, with plain kernel counts", () => {
    render(<RunTable of="sweep" rows={[run]} more={{ fetching: false, onMore: () => {} }} />);
    expect(headers("Sweep runs")).toEqual(["State", "Run", "Trace", "Config", "Kernels", "Cycles", "Wall time"]);
    const table = screen.getByRole("table", { name: "Sweep runs" });
    expect(within(table).getByRole("link", { name: "r1" })).toBeTruthy();
    expect(table.textContent).toContain("1500 / 3000");
    expect(screen.getByRole("button", { name: "Show more runs" })).toBeTruthy();
  });
});
