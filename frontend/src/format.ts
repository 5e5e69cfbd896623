const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** 1536 → "1.5 KiB": binary units, three significant digits, exact bytes below 1 KiB. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes == null || !Number.isFinite(bytes)) return "—";
  if (bytes < 0) return `-${formatBytes(-bytes)}`;
  if (bytes < 1024) return `${bytes} B`;
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  const digits = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${UNITS[u]}`;
}

/** Nanoseconds in the largest unit that keeps the number readable: "812 ns", "1.25 µs", "3.40 ms", "2.00 s". */
export function formatNs(ns: number | null | undefined): string {
  if (ns == null || !Number.isFinite(ns)) return "—";
  const a = Math.abs(ns);
  const [div, unit] =
    a < 1e3 ? [1, "ns"] : a < 1e6 ? [1e3, "µs"] : a < 1e9 ? [1e6, "ms"] : [1e9, "s"];
  const v = ns / div;
  const digits = div === 1 ? 0 : Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${unit}`;
}

/** Milliseconds as a duration: "450 ms", "12 s", "3 min 05 s", "2 h 07 min". */
export function formatDurationMs(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, "0")} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${String(m % 60).padStart(2, "0")} min`;
}

/** 1234567 → "1,234,567". */
export function formatCount(n: number | null | undefined): string {
  if (n == null || !Number.isFinite(n)) return "—";
  return n.toLocaleString("en-US");
}

export function formatDim3(d: { x: number; y: number; z: number }): string {
  return `${d.x}×${d.y}×${d.z}`;
}

/** A timestamp as local date and time, to the second. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, {
    year: "numeric", month: "short", day: "2-digit",
    hour: "2-digit", minute: "2-digit", second: "2-digit",
  });
}

/** 1 → "1 config", 3 → "3 configs", 1200 → "1,200 runs": a count and its noun, singular for one. */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${formatCount(n)} ${n === 1 ? noun : plural}`;
}
