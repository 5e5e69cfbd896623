import { useTitle } from "../router";

export const RUNS_UNAVAILABLE = "Runs are not available on this server yet.";

/** Shown at /runs, /runs/:id and /traces/:id/new-run until the server's schema has runs. */
export function RunsUnavailable({ title = "Runs" }: { title?: string }) {
  useTitle(title);
  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">{title}</h1>
      <p role="status">{RUNS_UNAVAILABLE}</p>
      <p className="muted">
        The server's GraphQL schema has no <code>simConfigs</code> or <code>runs</code>. These screens appear
        when it does and the UI is rebuilt.
      </p>
    </section>
  );
}
