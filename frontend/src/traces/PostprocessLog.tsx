import { useEffect, useRef, useState } from "react";
import { useEvents } from "../api/useEvents";
import { PostprocessLogSubscription } from "./documents";

const MAX_LINES = 1000;

/** Appends a chunk of new lines, keeping only the last `max`. */
export function appendLines(prev: readonly string[], lines: readonly string[], max = MAX_LINES): string[] {
  const next = prev.concat(lines);
  return next.length > max ? next.slice(next.length - max) : next;
}

function LogView({ lines, label }: { lines: readonly string[]; label: string }) {
  const ref = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [lines]);
  return (
    <pre ref={ref} className="log" aria-label={label} tabIndex={0} data-lines={lines.length}>
      {lines.length ? lines.join("\n") : "(no output yet)"}
    </pre>
  );
}

/** The post-processor's output as it is written. */
export function LivePostprocessLog({ traceId }: { traceId: string }) {
  const [lines, setLines] = useState<string[]>([]);
  useEvents(
    PostprocessLogSubscription,
    { traceId },
    (d) => setLines((p) => appendLines(p, d.postprocessLog.lines)),
    false,
    () => setLines([]),
  );
  return <LogView lines={lines} label="Post-processing log, live" />;
}

export function StaticLog({ lines, label }: { lines: readonly string[]; label: string }) {
  return <LogView lines={lines} label={label} />;
}
