// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { Provider, type Client } from "urql";
import { useRunKernels } from "./useRunKernels";

/** A server of a run's stored kernels (kernelIds 1..n), answering kernelPage as the API does. */
function fakeServer() {
  const s = {
    stored: 0,
    asked: [] as { first: number; after: string | null }[],
    client: {
      query: (_doc: unknown, v: { first: number; after: string | null }) => ({
        toPromise: async () => {
          s.asked.push({ first: v.first, after: v.after });
          const from = v.after == null ? 0 : Number(v.after);
          const to = Math.min(s.stored, from + v.first);
          const nodes = Array.from({ length: to - from }, (_, i) => ({ kernelId: from + i + 1 }));
          return {
            data: {
              run: {
                id: "r",
                kernelPage: {
                  totalCount: s.stored,
                  pageInfo: { hasNextPage: to < s.stored, endCursor: nodes.length ? String(to) : null },
                  nodes,
                },
              },
            },
          };
        },
      }),
    } as unknown as Client,
  };
  return s;
}

describe("useRunKernels", () => {
  it("reads by pages, the tail as progress grows once every page is read, and the first page again on a new version", async () => {
    const server = fakeServer();
    server.stored = 5;
    const wrapper = ({ children }: { children: ReactNode }) => <Provider value={server.client}>{children}</Provider>;
    const { result, rerender } = renderHook(
      ({ done, totals, version }: { done: number; totals: number[]; version: string }) => useRunKernels("r", done, totals, version, 2),
      { wrapper, initialProps: { done: 5, totals: [5], version: "RUNNING" } },
    );
    await waitFor(() => expect(result.current.rows.length).toBe(2));
    expect(result.current.total).toBe(5);
    expect(result.current.more).toBe(true);
    expect(result.current.totals).toBeNull();

    // Scrolled: the next pages, up to the last.
    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.rows.length).toBe(4));
    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.more).toBe(false));
    expect(result.current.rows.map((k) => k.kernelId)).toEqual([1, 2, 3, 4, 5]);
    expect(result.current.totals).toEqual([5]);
    const asked = server.asked.length;
    act(() => result.current.loadMore());
    expect(server.asked.length).toBe(asked);

    // Two more stored, and the run's progress says so: the kernels after the last read.
    server.stored = 7;
    rerender({ done: 7, totals: [7], version: "RUNNING" });
    await waitFor(() => expect(result.current.rows.length).toBe(7));
    expect(server.asked[asked]).toEqual({ first: 2, after: "5" });
    expect(result.current.rows.map((k) => k.kernelId)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(result.current.totals).toEqual([7]);

    // The run ends: its first page again, in place of the rows read.
    rerender({ done: 7, totals: [7], version: "SUCCEEDED" });
    await waitFor(() => expect(result.current.rows.length).toBe(2));
    expect(result.current.more).toBe(true);
    expect(result.current.total).toBe(7);
  });
});
