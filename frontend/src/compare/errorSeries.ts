/**
 * The per-kernel error chart's data: each config's errors along the kernels, folded into at
 * most `columns` buckets of consecutive kernels (a million kernels draw as a few hundred
 * marks), each bucket its lowest and highest error, so an outlier is never averaged away.
 */
export interface ErrorBucket {
  /** The first kernel (row index) of the bucket. */
  first: number;
  min: number;
  max: number;
  /** How many of its kernels have an error under this config. */
  n: number;
}

export interface ErrorSeries {
  config: string;
  buckets: ErrorBucket[];
}

/** bucketErrors folds rows' errors (one per config, null where missing) into series. */
export function bucketErrors(
  rows: readonly { errors: readonly (number | null | undefined)[] }[],
  configs: readonly string[],
  columns: number,
): ErrorSeries[] {
  const per = Math.max(1, Math.ceil(rows.length / Math.max(1, columns)));
  return configs.map((config, c) => {
    const buckets: ErrorBucket[] = [];
    for (let first = 0; first < rows.length; first += per) {
      let min = Infinity, max = -Infinity, n = 0;
      for (let i = first; i < Math.min(rows.length, first + per); i++) {
        const e = rows[i].errors[c];
        if (e == null || !Number.isFinite(e)) continue;
        min = Math.min(min, e);
        max = Math.max(max, e);
        n++;
      }
      if (n > 0) buckets.push({ first, min, max, n });
    }
    return { config, buckets };
  });
}

/**
 * errorScale is the chart's vertical extent: the largest |error| shown, rounded up to 1, 2 or
 * 5 times a power of ten (at least 1 %), so the axis labels are round.
 */
export function errorScale(series: readonly ErrorSeries[]): number {
  let m = 0;
  for (const s of series) for (const b of s.buckets) m = Math.max(m, Math.abs(b.min), Math.abs(b.max));
  if (m <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(m));
  for (const f of [1, 2, 5, 10]) if (m <= f * p) return f * p;
  return 10 * p;
}
