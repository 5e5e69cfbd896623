import { describe, expect, it } from "vitest";
import { runName } from "./runName";

const base = { id: "r1", trace: { id: "llama-7" }, simConfig: { name: "SM90_H100" } };

describe("runName", () => {
  it("is a lone run's label, or its id without one", () => {
    expect(runName({ ...base, label: "my run" })).toBe("my run");
    expect(runName({ ...base, label: null })).toBe("r1");
    expect(runName({ ...base, label: "", sweep: null })).toBe("r1");
  });

  it("tells a sweep's runs apart by trace and config", () => {
    const sweep = { id: "s1", label: "e2e sweep" };
    expect(runName({ ...base, label: "e2e sweep", sweep })).toBe("e2e sweep · llama-7 · SM90_H100");
    expect(runName({ ...base, id: "r2", label: "e2e sweep", simConfig: { name: "SM86_RTX3070" }, sweep })).toBe(
      "e2e sweep · llama-7 · SM86_RTX3070",
    );
    // A sweep without a label names its runs by the sweep's id.
    expect(runName({ ...base, label: null, sweep: { id: "s9", label: null } })).toBe("sweep s9 · llama-7 · SM90_H100");
  });

  it("keeps a label of the run's own, should a run of a sweep have one", () => {
    expect(runName({ ...base, label: "rerun", sweep: { id: "s1", label: "e2e sweep" } })).toBe("rerun");
  });
});
