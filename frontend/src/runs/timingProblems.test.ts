import { describe, expect, it } from "vitest";
import { timingProblems } from "./timingProblems";

describe("timingProblems", () => {
  const steps = "49 of 49 steps not projected: none of their events maps to a kernel with a simulated time";
  const bad = "real_timing.json: row 3: kernel_id is not an integer";

  it("while the run goes on, says how far the steps' projection is instead of a problem", () => {
    expect(timingProblems([bad, steps], false)).toEqual({ problems: [bad], note: "Steps are projected as their kernels are simulated: 0 of 49 so far." });
    expect(timingProblems(["12 of 49 steps not projected: x"], false).note).toBe("Steps are projected as their kernels are simulated: 37 of 49 so far.");
  });

  it("once it is over, lists every problem", () => {
    expect(timingProblems([bad, steps], true)).toEqual({ problems: [bad, steps], note: null });
  });
});
