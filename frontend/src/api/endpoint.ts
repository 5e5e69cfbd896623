/** The GraphQL endpoint is /graphql on the page's own origin (HTTP and websockets). */
export function graphqlHttpUrl(loc: Location = window.location): string {
  return `${loc.origin}/graphql`;
}

export function graphqlWsUrl(loc: Location = window.location): string {
  const proto = loc.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${loc.host}/graphql`;
}

/** Exponential backoff with jitter, 0.5 s doubling up to 10 s. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(10_000, 500 * 2 ** Math.max(0, attempt));
  return Math.round(base / 2 + (random() * base) / 2);
}
