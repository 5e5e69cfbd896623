import { formatCount } from "../format";

/** What a plan would simulate that its trace has no kernel trace of (SamplingPlan.untraced). */
export type Untraced = {
  count: number;
  note: string;
  launches?: readonly { launch: number; kernelId: number; context?: string | null }[];
  ranges?: readonly { context?: string | null; start: number; end: number }[];
};

/** A launch as the tracer names it: "9", or "9@0x7f00aa" in a context. */
export function launchName(l: { kernelId: number; context?: string | null }): string {
  return l.context ? `${l.kernelId}@${l.context}` : String(l.kernelId);
}

/** The plan list's mark of a plan that simulates untraced launches; nothing for one that does not. */
export function UntracedBadge({ u }: { u: Untraced | null | undefined }) {
  if (!u) return null;
  return (
    <span className="warn" data-testid="plan-untraced" title={u.note}>
      {" "}
      ⚠ {formatCount(u.count)} untraced
    </span>
  );
}

/** The plan view's warning: the note, and the launches and trace ranges it names. */
export function UntracedWarning({ u }: { u: Untraced | null | undefined }) {
  if (!u) return null;
  const shown = u.launches ?? [];
  return (
    <div className="error-box" role="status" data-testid="plan-untraced-warning">
      <strong>Needs kernel traces this trace does not have.</strong> {u.note}
      {shown.length > 0 && (
        <div className="mono" data-testid="plan-untraced-launches">
          Untraced launches: {shown.map((l) => `#${l.launch} (id ${launchName(l)})`).join(", ")}
          {u.count > shown.length ? ` and ${formatCount(u.count - shown.length)} more` : ""}
        </div>
      )}
      {u.ranges && u.ranges.length > 0 && (
        <div className="mono" data-testid="plan-untraced-ranges">
          Trace ranges holding them: {u.ranges.map((r) => `${r.start}–${r.end}${r.context ? `@${r.context}` : ""}`).join(", ")}
        </div>
      )}
    </div>
  );
}
