import { useEffect, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from "react";

const listeners = new Set<() => void>();
function notify() {
  listeners.forEach((l) => l());
}
if (typeof window !== "undefined") window.addEventListener("popstate", notify);

export function navigate(to: string, replace = false): void {
  if (replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  notify();
  window.scrollTo(0, 0);
}

function subscribe(l: () => void) {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function useLocation(): { pathname: string; search: string } {
  const href = useSyncExternalStore(subscribe, () => window.location.pathname + window.location.search);
  const u = new URL(href, "http://x");
  return { pathname: u.pathname, search: u.search };
}

export type Route =
  | { name: "traces" }
  | { name: "trace"; id: string }
  | { name: "runs" }
  | { name: "run"; id: string }
  | { name: "newRun"; traceId: string }
  | { name: "compare"; traceId: string }
  | { name: "sample"; traceId: string }
  | { name: "sweep"; id: string }
  | { name: "newSweep" }
  | { name: "notFound" };

/** Client routes: /, /traces, /traces/:id, /traces/:id/new-run, /traces/:id/compare, /traces/:id/sample, /runs, /runs/:id, /sweeps/new, /sweeps/:id. */
export function matchRoute(pathname: string): Route {
  const parts = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === "traces")) return { name: "traces" };
  if (parts[0] === "traces" && parts.length === 2) return { name: "trace", id: parts[1] };
  if (parts[0] === "traces" && parts.length === 3 && parts[2] === "new-run")
    return { name: "newRun", traceId: parts[1] };
  if (parts[0] === "traces" && parts.length === 3 && parts[2] === "compare")
    return { name: "compare", traceId: parts[1] };
  if (parts[0] === "traces" && parts.length === 3 && parts[2] === "sample")
    return { name: "sample", traceId: parts[1] };
  if (parts[0] === "runs" && parts.length === 1) return { name: "runs" };
  if (parts[0] === "runs" && parts.length === 2) return { name: "run", id: parts[1] };
  if (parts[0] === "sweeps" && parts.length === 2 && parts[1] === "new") return { name: "newSweep" };
  if (parts[0] === "sweeps" && parts.length === 2) return { name: "sweep", id: parts[1] };
  return { name: "notFound" };
}

export function tracePath(id: string): string {
  return `/traces/${encodeURIComponent(id)}`;
}

export function Link({ href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  function handle(e: MouseEvent<HTMLAnchorElement>) {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  }
  return <a href={href} onClick={handle} {...rest} />;
}

export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Cascade` : "Cascade";
  }, [title]);
}
