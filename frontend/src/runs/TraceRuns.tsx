import { HAS_RUNS } from "../gql/features";
import { cannotLaunchReason } from "./defaultConfig";
import { RUNS_UNAVAILABLE } from "./RunsUnavailable";

/** The runs section of a trace page. */
export function TraceRuns({ trace }: { trace: { id: string; state: string; sample: boolean } }) {
  const reason = cannotLaunchReason(trace);
  return (
    <section aria-labelledby="runs-title">
      <h2 id="runs-title">Runs</h2>
      {!HAS_RUNS ? (
        <p className="muted">{RUNS_UNAVAILABLE}</p>
      ) : (
        <p className="muted">{reason ?? "Run screens are not built into this UI yet."}</p>
      )}
    </section>
  );
}
