import { formatCount } from "../format";

/**
 * What a run simulates of its trace's kernels, for the run page: "every kernel", "12 chosen",
 * or, on a trace of several CUDA contexts (kernel ids restart in each, so a run names the context
 * of each id: Run.kernelContexts), "12 chosen in 2 CUDA contexts (0x55d2c3a1e4f0: 7, 0x7f00aa: 5)",
 * contexts in the order the run first names them.
 */
export function kernelSubset(ids: readonly number[] | null | undefined, contexts: readonly string[] | null | undefined): string {
  if (!ids) return "every kernel";
  const chosen = `${formatCount(ids.length)} chosen`;
  if (!contexts || contexts.length === 0) return chosen;
  const counts = new Map<string, number>();
  for (const c of contexts) counts.set(c, (counts.get(c) ?? 0) + 1);
  if (counts.size === 1) return `${chosen} in CUDA context ${contexts[0]}`;
  const each = [...counts].map(([c, n]) => `${c}: ${formatCount(n)}`).join(", ");
  return `${chosen} in ${counts.size} CUDA contexts (${each})`;
}
