import { useEffect, useState } from "react";
import { useClient } from "urql";
import type { CounterPairFieldsFragment as Pair, CounterPairsQuery as Data } from "../gql/graphql";
import { CounterPairsQuery } from "./documents";

/** The most points a scatter loads; past them it says how many more there are. */
export const MAX_POINTS = 5000;
const PAGE = 2500;

export interface CounterPairs {
  pairs: Pair[];
  /** The statistic's kernels with both values (null until the first page). */
  total: number | null;
  loading: boolean;
  error: string | null;
}

/**
 * A run's pairs of one statistic, page by page up to MAX_POINTS; read again from the first
 * page whenever version changes (the run or its trace changed).
 */
export function useCounterPairs(runId: string, statistic: string | null, version: string): CounterPairs {
  const client = useClient();
  const [state, setState] = useState<CounterPairs>({ pairs: [], total: null, loading: false, error: null });
  useEffect(() => {
    if (!statistic) return;
    let stopped = false;
    setState((s) => ({ ...s, loading: true, error: null }));
    void (async () => {
      const pairs: Pair[] = [];
      let after: string | null = null;
      let total: number | null = null;
      for (;;) {
        const first = Math.min(PAGE, MAX_POINTS - pairs.length);
        const r: { data?: Data; error?: { message: string } } = await client
          .query(CounterPairsQuery, { id: runId, statistic, first, after }, { requestPolicy: "network-only" })
          .toPromise();
        if (stopped) return;
        const c: NonNullable<Data["run"]>["counterPairs"] | undefined = r.data?.run?.counterPairs;
        if (!c) {
          setState({ pairs, total, loading: false, error: r.error?.message ?? "no answer" });
          return;
        }
        pairs.push(...c.nodes);
        total = c.totalCount;
        after = c.pageInfo.endCursor ?? null;
        if (!c.pageInfo.hasNextPage || pairs.length >= MAX_POINTS || !after) break;
      }
      setState({ pairs, total, loading: false, error: null });
    })();
    return () => {
      stopped = true;
    };
  }, [client, runId, statistic, version]);
  return state;
}
