import { useCallback, useEffect, useRef, useState } from "react";
import { useClient } from "urql";
import type { KernelsQuery as KernelsQueryData } from "../gql/graphql";
import { KernelsQuery } from "./documents";
import { makeCursorCodec, planFetches } from "./kernelChunks";

export type KernelRow = NonNullable<KernelsQueryData["trace"]>["kernels"]["nodes"][number];

export const CHUNK = 2000;
const MAX_IN_FLIGHT = 2;

export interface KernelChunks {
  rowAt: (index: number) => KernelRow | undefined;
  loadedRows: number;
  loading: boolean;
  error: string | null;
  /** The rows the table shows; the chunks they fall in are fetched. */
  show: (start: number, end: number) => void;
}

/**
 * Pages through trace.kernels(search, first, after) in chunks of CHUNK as the table scrolls. A
 * searched list keeps cursors of positions in the whole list, so its far chunks are walked to.
 */
export function useKernelChunks(traceId: string, total: number, search = ""): KernelChunks {
  const client = useClient();
  const chunks = useRef(new Map<number, KernelRow[]>());
  const endCursors = useRef(new Map<number, string | null>());
  const inFlight = useRef(new Set<number>());
  const codec = useRef(makeCursorCodec());
  const [version, setVersion] = useState(0);
  const [range, setRange] = useState<[number, number]>([0, 0]);
  const [error, setError] = useState<string | null>(null);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  const cursorFor = useCallback((k: number): string | null | undefined => {
    if (k === 0) return null;
    const prev = endCursors.current.get(k - 1);
    if (prev !== undefined) return prev;
    return search ? undefined : codec.current.cursorAfter(k * CHUNK - 1);
  }, [search]);

  useEffect(() => {
    if (error) return;
    const next = planFetches({
      start: range[0],
      end: range[1],
      total,
      chunkSize: CHUNK,
      loaded: new Set(chunks.current.keys()),
      inFlight: inFlight.current,
      cursorFor,
      maxInFlight: MAX_IN_FLIGHT,
    });
    for (const k of next) {
      inFlight.current.add(k);
      client
        .query(KernelsQuery, { id: traceId, search: search || null, first: CHUNK, after: cursorFor(k) ?? null }, { requestPolicy: "network-only" })
        .toPromise()
        .then((r) => {
          inFlight.current.delete(k);
          if (!alive.current) return;
          const page = r.data?.trace?.kernels;
          if (r.error || !page) {
            setError(r.error?.message ?? "The trace is gone.");
            return;
          }
          chunks.current.set(k, page.nodes);
          endCursors.current.set(k, page.pageInfo.endCursor ?? null);
          if (k === 0) codec.current.observe(page.nodes.length - 1, page.pageInfo.endCursor);
          setVersion((v) => v + 1);
        });
    }
    if (next.length) setVersion((v) => v + 1);
  }, [client, traceId, search, total, range, version, error, cursorFor]);

  const rowAt = useCallback((i: number) => chunks.current.get(Math.floor(i / CHUNK))?.[i % CHUNK], []);
  const show = useCallback(
    (start: number, end: number) => setRange((r) => (r[0] === start && r[1] === end ? r : [start, end])),
    [],
  );
  let loadedRows = 0;
  chunks.current.forEach((c) => (loadedRows += c.length));
  return { rowAt, loadedRows, loading: inFlight.current.size > 0, error, show };
}
