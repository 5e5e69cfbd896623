import type { SamplingPlanDetailFragment } from "../gql/graphql";

type Rep = SamplingPlanDetailFragment["strata"][number]["representatives"][number];

/**
 * One representative: its launch, kernel id, context and weight, and the launches simulated before
 * it; "no warm-up" when a plan with warm-up gives it none (a census of one small launch, or the
 * first launch of its context).
 */
export function Representative({ r, planWarmup }: { r: Rep; planWarmup: number }) {
  return (
    <div className="mono" data-testid="representative">
      #{r.launch} · id {r.kernelId}
      {r.context ? ` (${r.context})` : ""} · ×{r.weight.toFixed(r.weight % 1 ? 2 : 0)}
      {r.warmup.length > 0 ? (
        <span className="muted"> · after {r.warmup.map((w) => `#${w.launch}`).join(", ")}</span>
      ) : (
        planWarmup > 0 &&
        r.launch > 0 && (
          <span
            className="muted"
            data-testid="no-warmup"
            title="Simulated without warm-up: a stratum of one launch holding no more of the trace's warp instructions than the error bound (its warm-up would cost more than its error), or its context's first launch. The interval allows for it."
          >
            {" "}
            · no warm-up
          </span>
        )
      )}
    </div>
  );
}
