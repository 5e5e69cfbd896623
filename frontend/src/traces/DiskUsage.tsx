import { useEffect, useRef } from "react";
import { useLiveQuery } from "../api/useLiveQuery";
import { useEvents } from "../api/useEvents";
import { formatBytes } from "../format";
import { graphql } from "../gql";
import { TraceUpdatedSubscription } from "./documents";

const DiskUsageQuery = graphql(`
  query DiskUsage {
    diskUsage { budgetBytes usedBytes freeBytes projectedBytes warning }
  }
`);

/** How long trace events gather before disk usage is fetched again. */
const REFRESH_AFTER_MS = 2000;

/**
 * The data directory's disk use, with the server's warning when the traces, once processed
 * (about 2.2 times their upload), would pass the --disk-gib budget or the free space. It is
 * fetched again a moment after traces change, never on a timer.
 */
export function DiskUsage() {
  const [{ data }, reexecute] = useLiveQuery({ query: DiskUsageQuery });
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEvents(TraceUpdatedSubscription, { id: null }, () => {
    if (timer.current !== null) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      reexecute({ requestPolicy: "network-only" });
    }, REFRESH_AFTER_MS);
  });
  useEffect(() => () => {
    if (timer.current !== null) clearTimeout(timer.current);
  }, []);
  const d = data?.diskUsage;
  if (!d) return null;
  return (
    <div className="disk-usage">
      <p className="muted" aria-label="Disk usage">
        Disk: {formatBytes(d.usedBytes)} of traces, about {formatBytes(d.projectedBytes)} once processed
        {d.budgetBytes != null ? ` · budget ${formatBytes(d.budgetBytes)}` : ""} · {formatBytes(d.freeBytes)} free
      </p>
      {d.warning && (
        <p role="alert" className="error">
          {d.warning}
        </p>
      )}
    </div>
  );
}
