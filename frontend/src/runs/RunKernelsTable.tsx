import { useRef, useState } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import { formatCount, formatNs } from "../format";
import type { RunDetailFragment } from "../gql/graphql";
import { formatPct } from "./compare";
import { KernelName, kernelMatches } from "../components/KernelName";
import { THREAD_INSTRUCTIONS } from "../units";

const ROW = 30;

/** Per-kernel results of a run, virtualised, with a search over mangled and demangled names. */
export function RunKernelsTable({ kernels: all }: { kernels: RunDetailFragment["kernels"] }) {
  const [text, setText] = useState("");
  const kernels = text.trim() ? all.filter((k) => kernelMatches(k, text)) : all;
  const scroller = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({ count: kernels.length, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 15 });
  if (all.length === 0) return <p className="muted">No kernel has finished yet.</p>;
  return (
    <>
    <label className="kernel-search">
      Search kernels{" "}
      <input
        type="search"
        aria-label="Search run kernels by name, mangled or demangled"
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      {text.trim() && <span className="hint"> {formatCount(kernels.length)} of {formatCount(all.length)}</span>}
    </label>
    <div role="table" aria-label="Run kernels" aria-rowcount={kernels.length + 1} className="ktable">
      <div role="rowgroup">
        <div role="row" aria-rowindex={1} className="rkrow khead">
          <span role="columnheader">Kernel</span>
          <span role="columnheader">Name</span>
          <span role="columnheader" className="num">Launch</span>
          <span role="columnheader" className="num">Cycles</span>
          <span role="columnheader" className="num" title={THREAD_INSTRUCTIONS}>
            Instructions <span className="unit">(thread)</span>
          </span>
          <span role="columnheader" className="num" title="Thread instructions per simulated cycle">
            IPC <span className="unit">(thread)</span>
          </span>
          <span role="columnheader" className="num">Simulated</span>
          <span role="columnheader" className="num">Measured</span>
          <span role="columnheader" className="num">Error</span>
        </div>
      </div>
      <div ref={scroller} className="kscroll" role="rowgroup" tabIndex={0} aria-label="Run kernel rows, scrollable">
        <div style={{ height: v.getTotalSize(), position: "relative" }}>
          {v.getVirtualItems().map((it) => {
            const k = kernels[it.index];
            return (
              <div
                key={it.key}
                role="row"
                aria-rowindex={it.index + 2}
                className="rkrow"
                style={{ position: "absolute", top: 0, left: 0, right: 0, height: ROW, transform: `translateY(${it.start}px)` }}
              >
                <span role="cell">{k.kernelId}</span>
                <span role="cell">
                  <KernelName name={k.name} displayName={k.displayName} demangledName={k.demangledName} />
                  {k.truncated && <span className="tag" title="The simulator's cycle limit cut this kernel short">truncated</span>}
                </span>
                <span role="cell" className="num">{k.launchUid ?? "—"}</span>
                <span role="cell" className="num">{formatCount(k.simCycles)}</span>
                <span role="cell" className="num">{formatCount(k.simInstructions)}</span>
                <span role="cell" className="num">{k.ipc == null ? "—" : k.ipc.toFixed(2)}</span>
                <span role="cell" className="num">{formatNs(k.simTimeNs)}</span>
                <span role="cell" className="num">{formatNs(k.measuredNs)}</span>
                <span role="cell" className="num">{formatPct(k.errorPct)}</span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
    </>
  );
}
