import { useCallback, useEffect, useRef, useState } from "react";
import { useClient } from "urql";
import type { KernelsQuery as KernelsQueryData } from "../gql/graphql";
import { KernelsQuery } from "./documents";

export type KernelRow = NonNullable<KernelsQueryData["trace"]>["kernels"]["nodes"][number];

export const CHUNK = 2000;

export interface KernelChunks {
  rows: KernelRow[];
  loading: boolean;
  error: string | null;
  /** Ask for rows up to this index; chunks load in order, since cursors are opaque. */
  want: (index: number) => void;
}

/** Pages through trace.kernels(first, after) in chunks of CHUNK as the table needs them. */
export function useKernelChunks(traceId: string, total: number): KernelChunks {
  const client = useClient();
  const [rows, setRows] = useState<KernelRow[]>([]);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [wanted, setWanted] = useState(0);
  const cursor = useRef<string | null>(null);
  const more = useRef(true);

  const inFlight = useRef(false);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  useEffect(() => {
    if (inFlight.current || error || !more.current || rows.length >= total) return;
    if (rows.length > wanted + CHUNK / 2) return;
    inFlight.current = true;
    setLoading(true);
    client
      .query(KernelsQuery, { id: traceId, first: CHUNK, after: cursor.current }, { requestPolicy: "network-only" })
      .toPromise()
      .then((r) => {
        inFlight.current = false;
        if (!alive.current) return;
        setLoading(false);
        const page = r.data?.trace?.kernels;
        if (r.error || !page) {
          setError(r.error?.message ?? "The trace is gone.");
          return;
        }
        cursor.current = page.pageInfo.endCursor ?? null;
        more.current = page.pageInfo.hasNextPage && page.nodes.length > 0;
        setRows((prev) => prev.concat(page.nodes));
      });
  }, [client, traceId, total, rows.length, wanted, error]);

  const want = useCallback((index: number) => setWanted((w) => (index > w ? index : w)), []);
  return { rows, loading, error, want };
}
