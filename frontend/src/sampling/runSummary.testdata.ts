// A segment's run summary as the run page's query returns it, for the sampled and split run
// panels' tests.
export const runSummary = (id: string, state: string, done: number, total: number, simConfig = "SM7_QV100") => ({
  __typename: "Run" as const,
  id,
  state: state as "SUCCEEDED",
  label: null,
  error: null,
  failureClass: null,
  createdAt: "2026-01-01T00:00:00Z",
  updatedAt: "2026-01-01T00:00:01Z",
  startedAt: null,
  finishedAt: null,
  simConfig: { name: simConfig },
  trace: { id: "t", model: null },
  progress: { kernelsDone: done, kernelsTotal: total },
  sweep: null,
  figures: { wallSeconds: null, simCycles: null },
  sampling: null,
  sampledBy: null,
});
