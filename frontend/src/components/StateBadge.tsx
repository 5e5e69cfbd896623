import type { RunState, TraceState } from "../gql/graphql";

interface BadgeInfo {
  label: string;
  icon: string;
  description: string;
}

/** Each state has its own word, icon and shape, so colour is never the only signal. */
export const TRACE_STATES: Record<TraceState, BadgeInfo> = {
  UPLOADING: { label: "Uploading", icon: "↑", description: "Files are arriving" },
  PROCESSING: { label: "Processing", icon: "⚙", description: "Upload complete; post-processing" },
  READY: { label: "Ready", icon: "✓", description: "Post-processed; runs can launch" },
  FAILED: { label: "Failed", icon: "✕", description: "Upload or post-processing failed" },
};

export const RUN_STATES: Record<RunState, BadgeInfo> = {
  QUEUED: { label: "Queued", icon: "…", description: "Waiting for a simulator slot" },
  RUNNING: { label: "Running", icon: "▶", description: "The simulator is running" },
  SUCCEEDED: { label: "Succeeded", icon: "✓", description: "Every kernel simulated" },
  FAILED: { label: "Failed", icon: "✕", description: "The simulation failed" },
  CANCELLED: { label: "Cancelled", icon: "■", description: "Cancelled before it finished" },
};

export type BadgeKind = "trace" | "run";

export function badgeInfo(state: string, kind: BadgeKind = "trace"): BadgeInfo {
  const table: Record<string, BadgeInfo> = kind === "run" ? RUN_STATES : TRACE_STATES;
  return table[state] ?? { label: state, icon: "?", description: `Unknown state ${state}` };
}

export function StateBadge({ state, kind = "trace" }: { state: string; kind?: BadgeKind }) {
  const info = badgeInfo(state, kind);
  return (
    <span
      className={`badge badge-${state.toLowerCase()}`}
      data-state={state}
      title={info.description}
      aria-label={`State: ${info.label}`}
    >
      <span className="badge-icon" aria-hidden="true">
        {info.icon}
      </span>
      {info.label}
    </span>
  );
}
