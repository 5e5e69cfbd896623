// The timing problems a run page lists. While the run is going, steps without a simulated
// kernel yet are not a problem but work to come: "49 of 49 steps not projected" showed as soon
// as a sampled run started.
const NOT_PROJECTED = /^(\d+) of (\d+) steps not projected\b/;

/** The problems to list and, while the run goes on, a note on how far the steps' projection is. */
export function timingProblems(problems: readonly string[], over: boolean): { problems: string[]; note: string | null } {
  if (over) return { problems: [...problems], note: null };
  let note: string | null = null;
  const rest = problems.filter((p) => {
    const m = NOT_PROJECTED.exec(p);
    if (!m) return true;
    const [missing, all] = [Number(m[1]), Number(m[2])];
    note = `Steps are projected as their kernels are simulated: ${all - missing} of ${all} so far.`;
    return false;
  });
  return { problems: rest, note };
}
