import { CompareLink } from "../compare/CompareLink";
import { Link, tracePath } from "../router";
import { cannotLaunchReason } from "./defaultConfig";
import { RunList } from "./RunsScreen";

/** The runs section of a trace page: its runs, live, and New run (or why it cannot launch). */
export function TraceRuns({ trace }: { trace: { id: string; state: string; sample: boolean } }) {
  const reason = cannotLaunchReason(trace);
  return (
    <section aria-labelledby="trace-runs-title">
      <div className="toolbar">
        <h2 id="trace-runs-title">Runs</h2>
        <CompareLink traceId={trace.id} />
        {trace.state === "READY" && (
          <Link href={`${tracePath(trace.id)}/sample`} className="button" role="button">
            Sample
          </Link>
        )}
        {!reason && (
          <Link href={`${tracePath(trace.id)}/new-run`} className="button primary" role="button">
            New run
          </Link>
        )}
      </div>
      {reason && <p className="muted" data-testid="cannot-launch">{reason}</p>}
      <RunList state={null} traceId={trace.id} />
    </section>
  );
}
