/**
 * Which kernel chunks to fetch. The kernel list pages through kernels(first, after) with opaque
 * cursors, so chunk k can only be asked for with the end cursor of chunk k-1, unless the
 * server's cursors turn out to follow a pattern this client recognises (see cursorCodec).
 */
export interface ChunkPlanInput {
  /** Indexes of the first and last row the table shows. */
  start: number;
  end: number;
  total: number;
  chunkSize: number;
  loaded: ReadonlySet<number>;
  inFlight: ReadonlySet<number>;
  /** The `after` cursor to fetch chunk k with, undefined when it is not known yet. */
  cursorFor: (k: number) => string | null | undefined;
  maxInFlight: number;
}

export function planFetches(p: ChunkPlanInput): number[] {
  if (p.total <= 0) return [];
  const last = Math.ceil(p.total / p.chunkSize) - 1;
  const first = Math.max(0, Math.min(last, Math.floor(p.start / p.chunkSize)));
  // One chunk beyond the view, so plain scrolling never reaches an unloaded row.
  const upto = Math.max(0, Math.min(last, Math.floor((p.end + p.chunkSize / 2) / p.chunkSize)));
  const out: number[] = [];
  let budget = p.maxInFlight - p.inFlight.size;
  for (let k = first; k <= upto && budget > 0; k++) {
    if (p.loaded.has(k) || p.inFlight.has(k)) continue;
    let j = k;
    // No cursor for this chunk yet: walk back to the earliest missing chunk that has one.
    while (j > 0 && p.cursorFor(j) === undefined) j--;
    if (p.inFlight.has(j) || out.includes(j)) {
      if (j !== k) break; // the walk towards k is under way; wait for it
      continue;
    }
    out.push(j);
    budget--;
    if (j !== k) break;
  }
  return out;
}

/**
 * Learns whether the server's cursors are base64url("seq:<row index>"), checked against the
 * real end cursor of the first chunk. Only then are cursors for far chunks computed, so a jump
 * to row 90,000 costs one request instead of 45; anything else keeps the sequential walk.
 */
export function makeCursorCodec() {
  let verified = false;
  const encode = (index: number) =>
    btoa(`seq:${index}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return {
    observe(lastIndex: number, endCursor: string | null | undefined) {
      if (endCursor != null) verified = endCursor === encode(lastIndex);
    },
    cursorAfter(index: number): string | undefined {
      return verified ? encode(index) : undefined;
    },
    get verified() {
      return verified;
    },
  };
}
