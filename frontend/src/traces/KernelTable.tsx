import { useEffect, useRef, useState } from "react";
import { useQuery } from "urql";
import { useVirtualizer } from "@tanstack/react-virtual";
import { formatCount, formatDim3 } from "../format";
import { useKernelChunks } from "./useKernelChunks";
import { KernelCountQuery } from "./documents";
import { KernelName } from "../components/KernelName";
import { WARP_INSTRUCTIONS } from "../units";

const ROW_HEIGHT = 30;

/**
 * A trace's kernels with a search box: the search matches mangled and demangled names, on the
 * server, so it covers every kernel, not only those loaded.
 */
export function Kernels({ traceId, total }: { traceId: string; total: number }) {
  const [text, setText] = useState("");
  const [search, setSearch] = useState("");
  useEffect(() => {
    const t = setTimeout(() => setSearch(text.trim()), 200);
    return () => clearTimeout(t);
  }, [text]);
  const [{ data, error }] = useQuery({ query: KernelCountQuery, variables: { id: traceId, search }, pause: !search });
  const matched = search ? data?.trace?.kernels.totalCount : total;
  return (
    <>
      <label className="kernel-search">
        Search kernels{" "}
        <input
          type="search"
          aria-label="Search kernels by name, mangled or demangled"
          placeholder="rms_norm, vllm::, _ZN4vllm…"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      </label>
      {error && <p className="error">{error.message}</p>}
      {matched == null ? (
        <p aria-busy="true" className="muted">Searching…</p>
      ) : matched === 0 ? (
        <p className="muted">No kernel name holds “{search}”.</p>
      ) : (
        <KernelTable key={`${search}|${matched}`} traceId={traceId} total={matched} search={search} />
      )}
    </>
  );
}

/** Every kernel of a trace (or those matching search), virtualised: only the rows in view are in the DOM. */
export function KernelTable({ traceId, total, search = "" }: { traceId: string; total: number; search?: string }) {
  const { rowAt, loadedRows, loading, error, show } = useKernelChunks(traceId, total, search);
  const scroller = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({
    count: total,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 15,
  });
  const items = v.getVirtualItems();
  const first = items.length ? items[0].index : 0;
  const last = items.length ? items[items.length - 1].index : 0;
  useEffect(() => show(first, last), [first, last, show]);

  return (
    <div className="kernels">
      <div className="kernels-status muted" aria-live="polite">
        {formatCount(loadedRows)} of {formatCount(total)} {search ? "matching " : ""}kernels loaded
        {loading && " — loading…"}
        {error && <span className="error"> — {error}</span>}
      </div>
      {/* Narrower than its columns, the table scrolls sideways whole, its header with its rows. */}
      <div className="ktable-wrap">
      <div role="table" aria-label="Kernels" aria-rowcount={total + 1} className="ktable trace-ktable">
        <div role="rowgroup">
          <div role="row" aria-rowindex={1} className="krow khead">
            <span role="columnheader">#</span>
            <span role="columnheader">Kernel</span>
            <span role="columnheader">Context</span>
            <span role="columnheader">Name</span>
            <span role="columnheader">Grid</span>
            <span role="columnheader">Block</span>
            <span role="columnheader" className="num" title={WARP_INSTRUCTIONS}>
              Instructions <span className="unit">(warp)</span>
            </span>
          </div>
        </div>
        <div ref={scroller} className="kscroll" role="rowgroup" tabIndex={0} aria-label="Kernel rows, scrollable">
          <div style={{ height: v.getTotalSize(), position: "relative" }}>
            {items.map((it) => {
              const k = rowAt(it.index);
              return (
                <div
                  role="row"
                  aria-rowindex={it.index + 2}
                  key={it.key}
                  className="krow"
                  data-kernel-index={it.index}
                  style={{ position: "absolute", top: 0, left: 0, right: 0, height: ROW_HEIGHT, transform: `translateY(${it.start}px)` }}
                >
                  <span role="cell" className="muted">{formatCount(it.index + 1)}</span>
                  {k ? (
                    <>
                      <span role="cell">
                        {k.kernelId}
                        {!k.traced && (
                          <span className="muted" data-testid="untraced" title="The tracer counted this launch (its stats row) without tracing it: it was outside the DYNAMIC_KERNEL_LIMIT ranges. Only a sampled run whose representatives were traced, or a run of traced kernel ids, can simulate this trace.">
                            {" "}not traced
                          </span>
                        )}
                      </span>
                      <span role="cell" className="mono">{k.context ?? "—"}</span>
                      <span role="cell">
                        <KernelName name={k.name} displayName={k.displayName} demangledName={k.demangledName} extraTitle={k.traceFile} />
                      </span>
                      <span role="cell" className="mono">{formatDim3(k.grid)}</span>
                      <span role="cell" className="mono">{formatDim3(k.block)}</span>
                      <span role="cell" className="num">{formatCount(k.instructions)}</span>
                    </>
                  ) : (
                    <span role="cell" className="muted placeholder">loading…</span>
                  )}
                </div>
              );
            })}
          </div>
        </div>
      </div>
      </div>
    </div>
  );
}
