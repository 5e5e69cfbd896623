import type { TraceState } from "../gql/graphql";

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

export function badgeInfo(state: string): BadgeInfo {
  return (
    TRACE_STATES[state as TraceState] ?? { label: state, icon: "?", description: `Unknown state ${state}` }
  );
}

export function StateBadge({ state }: { state: string }) {
  const info = badgeInfo(state);
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
