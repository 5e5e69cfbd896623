import { useEffect, useRef } from "react";

/**
 * Calls fn when key changes (not on the first render), at most once every ms: a change
 * within ms of the last call is taken up at the end of that interval, once for all the
 * changes in it. A run's progress events come many a second; its figures need not follow
 * each.
 */
export function useThrottledOnChange(key: string, fn: () => void, ms: number): void {
  const f = useRef(fn);
  f.current = fn;
  const first = useRef(key);
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (key === first.current) return;
    first.current = key;
    if (timer.current) return;
    const wait = last.current + ms - Date.now();
    const call = () => {
      timer.current = null;
      last.current = Date.now();
      f.current();
    };
    if (wait <= 0) call();
    else timer.current = setTimeout(call, wait);
  }, [key, ms]);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
}
