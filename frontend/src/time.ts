/**
 * Compares two RFC 3339 timestamps as instants, to the nanosecond. The server writes Go's
 * RFC3339Nano, whose fraction has as many digits as it needs ("…:20.75Z", "…:20.756Z"), so
 * the strings do not sort as text. Returns <0, 0 or >0.
 */
export function compareTime(a: string, b: string): number {
  const ka = timeKey(a);
  const kb = timeKey(b);
  if (ka.seconds !== kb.seconds) return ka.seconds < kb.seconds ? -1 : 1;
  return ka.fraction < kb.fraction ? -1 : ka.fraction > kb.fraction ? 1 : 0;
}

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/i;

function timeKey(s: string): { seconds: number; fraction: string } {
  const m = RFC3339.exec(s.trim());
  if (!m) {
    const ms = Date.parse(s);
    return { seconds: Number.isNaN(ms) ? -Infinity : Math.floor(ms / 1000), fraction: "" };
  }
  const zone = m[3].toUpperCase();
  return {
    seconds: Date.parse(m[1] + zone) / 1000,
    fraction: (m[2] ?? "").padEnd(9, "0").slice(0, 9),
  };
}

/**
 * The newer of two copies of the same thing (a trace, a run, a sweep's progress) by updatedAt:
 * b when they tie, and the other when one is missing or has no updatedAt.
 */
export function newest<T extends { updatedAt?: string | null }>(a: T | null | undefined, b: T): T;
export function newest<T extends { updatedAt?: string | null }>(a: T | null | undefined, b: T | null | undefined): T | null;
export function newest<T extends { updatedAt?: string | null }>(a: T | null | undefined, b: T | null | undefined): T | null {
  if (!a?.updatedAt) return b ?? a ?? null;
  if (!b?.updatedAt) return a;
  return compareTime(b.updatedAt, a.updatedAt) >= 0 ? b : a;
}
