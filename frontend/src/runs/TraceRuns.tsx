import { useRef } from "react";
import { useEvents } from "../api/useEvents";
import { useLiveQuery } from "../api/useLiveQuery";
import { CompareLink } from "../compare/CompareLink";
import { Link, tracePath } from "../router";
import { cannotLaunchReason } from "./defaultConfig";
import { SimConfigsCheckedSubscription, TraceSimulatableQuery } from "./documents";
import { RunList } from "./RunsScreen";

/**
 * The runs section of a trace page: its runs, live, and New run (or why it cannot launch: a
 * trace the simulator cannot decode shows why, once the simulator has said so).
 */
export function TraceRuns({ trace }: { trace: { id: string; state: string; sample: boolean } }) {
  const ready = trace.state === "READY" && !trace.sample;
  const [{ data }, reexecute] = useLiveQuery({ query: TraceSimulatableQuery, variables: { id: trace.id }, pause: !ready });
  // Until the simulator has said which binary versions it decodes, every trace is simulatable:
  // ask again once it has.
  const unchecked = data?.simConfigs.some((c) => !c.checked) ?? false;
  const uncheckedNow = useRef(unchecked);
  uncheckedNow.current = unchecked;
  useEvents(SimConfigsCheckedSubscription, {}, (d) => {
    if (d.simConfigsChecked && uncheckedNow.current) reexecute({ requestPolicy: "network-only" });
  });
  const reason = cannotLaunchReason({ ...trace, notSimulatableReason: data?.trace?.notSimulatableReason });
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
