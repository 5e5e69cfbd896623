import { useState } from "react";
import { useEvents } from "../api/useEvents";
import { graphql } from "../gql";

export const ExecutorSubscription = graphql(`
  subscription ExecutorUpdated {
    executorUpdated { kind healthy message }
  }
`);

/**
 * Says when the run executor does not answer (Slurm's commands failing or timing out): runs
 * keep their state meanwhile, and the server polls on until Slurm answers again. The
 * subscription's first message is the current status, so no query is needed.
 */
export function ExecutorBanner() {
  const [status, setStatus] = useState<{ kind: string; healthy: boolean; message?: string | null } | null>(null);
  useEvents(ExecutorSubscription, {}, (d) => setStatus(d.executorUpdated));
  if (!status || status.healthy) return null;
  return (
    <p className="error-box executor-banner" role="alert" data-testid="executor-banner">
      <strong>{status.kind === "slurm" ? "Slurm is unavailable." : "The run executor is unavailable."}</strong>{" "}
      {status.message}
    </p>
  );
}
