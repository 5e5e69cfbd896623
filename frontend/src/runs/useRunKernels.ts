import { useCallback, useEffect, useRef, useState } from "react";
import { useClient } from "urql";
import type { RunKernelRowFragment } from "../gql/graphql";
import { RunKernelPageQuery } from "./documents";
import type { StatValues } from "./stats";

/** Kernels a page of the run page's table holds. */
export const KERNEL_PAGE = 200;

export interface RunKernels {
  /** The kernels read so far, in launch order. */
  rows: readonly RunKernelRowFragment[];
  /** The run's kernels in all pages, as the last page read said; null before the first. */
  total: number | null;
  /** Whether pages are left to read. */
  more: boolean;
  error: string | null;
  /**
   * The run's statistics totals as they were when the last page was asked for, once every
   * page is read: the totals of the kernels in rows. Null while pages are left.
   */
  totals: StatValues | null;
  /** Reads the next page, unless one is being read or none is left. */
  loadMore: () => void;
}

interface Shown {
  rows: RunKernelRowFragment[];
  total: number | null;
  more: boolean;
  error: string | null;
  totals: StatValues | null;
}

/**
 * Reads run id's kernels by pages of pageSize (Run.kernelPage), the next one when loadMore is
 * called (the table scrolled near its end). While every page is read and changed (the run's
 * version, from its runUpdated messages) moves, reads the kernels stored after the last one:
 * no timer, the run's own updates say when. A kernel's result is stored when the next kernel
 * launches, which moves no count of finished kernels, so the version is more than the progress. When version changes (the run ended, its check
 * appeared: rows read before may have changed) it reads the first page again, and the rows
 * read so far stay shown until it comes.
 */
export function useRunKernels(
  id: string,
  changed: string | number,
  totals: StatValues | null | undefined,
  version: string,
  pageSize = KERNEL_PAGE,
): RunKernels {
  const client = useClient();
  const [shown, setShown] = useState<Shown>({ rows: [], total: null, more: true, error: null, totals: null });
  const latestTotals = useRef(totals ?? null);
  latestTotals.current = totals ?? null;
  // after: the cursor of the last row read; again: read once more when the current read ends
  // (progress grew meanwhile); gen: reads of an earlier version are dropped.
  const cur = useRef({ after: null as string | null, more: true, loading: false, again: false, replace: true, gen: 0 });

  const load = useCallback((again = false) => {
    const c = cur.current;
    if (c.loading) {
      c.again ||= again;
      return;
    }
    c.loading = true;
    c.again = false;
    const gen = c.gen;
    const replace = c.replace;
    const asked = latestTotals.current;
    void client
      .query(RunKernelPageQuery, { id, first: pageSize, after: c.after }, { requestPolicy: "network-only" })
      .toPromise()
      .then((r) => {
        if (gen !== cur.current.gen) return;
        c.loading = false;
        const p = r.data?.run?.kernelPage;
        if (!p) {
          c.more = false;
          setShown((s) => ({ ...s, more: false, error: r.error?.message ?? "no answer" }));
          return;
        }
        c.replace = false;
        c.after = p.pageInfo.endCursor ?? c.after;
        c.more = p.pageInfo.hasNextPage;
        setShown((s) => ({
          rows: replace ? p.nodes : [...s.rows, ...p.nodes],
          total: p.totalCount,
          more: p.pageInfo.hasNextPage,
          error: null,
          totals: p.pageInfo.hasNextPage ? null : asked,
        }));
        // Kernels stored while this was read: the tail, unless pages are left (a scroll reads them).
        if (c.again && !c.more) load(true);
      });
  }, [client, id, pageSize]);

  // The first page, and again from the first when the version changes.
  useEffect(() => {
    const c = cur.current;
    c.gen++;
    c.after = null;
    c.more = true;
    c.loading = false;
    c.again = false;
    c.replace = true;
    load(true);
  }, [load, version]);

  // New kernels while the run runs: only once every page is read (the next scroll reads them
  // otherwise), or after the read under way (its answer may have been made before they were
  // stored).
  const seen = useRef(changed);
  useEffect(() => {
    if (changed === seen.current) return;
    seen.current = changed;
    if (!cur.current.more || cur.current.loading) load(true);
  }, [changed, load]);

  const loadMore = useCallback(() => {
    if (cur.current.more) load();
  }, [load]);
  return { ...shown, loadMore };
}
