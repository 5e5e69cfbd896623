import { useCallback, useRef } from "react";
import { useLiveQuery } from "../api/useLiveQuery";
import { Link, tracePath } from "../router";
import { TraceConfigsQuery } from "./documents";
import { useRefetchOnTraceRunState } from "./liveStates";

/** A link to the trace's Compare configs page, shown once it has runs on two configs or more. */
export function CompareLink({ traceId }: { traceId: string }) {
  const [{ data }, reexecute] = useLiveQuery({ query: TraceConfigsQuery, variables: { id: traceId } });
  const known = useRef(new Map<string, string>()).current;
  const refetch = useCallback(() => reexecute({ requestPolicy: "network-only" }), [reexecute]);
  useRefetchOnTraceRunState(traceId, known, refetch);
  const n = data?.trace?.configComparison.length ?? 0;
  if (n < 2) return null;
  return (
    <Link href={`${tracePath(traceId)}/compare`} className="button" role="button">
      Compare configs ({n})
    </Link>
  );
}
