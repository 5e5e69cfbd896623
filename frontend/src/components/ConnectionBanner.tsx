import { useEffect, useState } from "react";
import { useConnection } from "../api/connection";

/** Says plainly when live updates are cut off, and when the next reconnect attempt is. */
export function ConnectionBanner() {
  const { status, retryAt } = useConnection();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (status === "connected" || retryAt == null) return;
    const t = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(t);
  }, [status, retryAt]);
  if (status === "connected") {
    return (
      <span className="conn conn-ok" role="status" aria-live="polite" data-connection="connected">
        <span aria-hidden="true">●</span> Live
      </span>
    );
  }
  const secs = retryAt ? Math.max(0, Math.ceil((retryAt - now) / 1000)) : null;
  const text =
    status === "connecting"
      ? "Connecting to the server…"
      : `Connection lost — live updates paused. ${secs ? `Reconnecting in ${secs} s…` : "Reconnecting…"}`;
  return (
    <span className="conn conn-down" role="alert" data-connection={status}>
      <span aria-hidden="true">○</span> {text}
    </span>
  );
}
