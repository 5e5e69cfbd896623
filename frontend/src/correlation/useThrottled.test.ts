// @vitest-environment jsdom
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { renderHook } from "@testing-library/react";
import { useThrottledOnChange } from "./useThrottled";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

test("a change calls at once, changes within the interval once at its end, the first render never", () => {
  const fn = vi.fn();
  const { rerender } = renderHook(({ k }) => useThrottledOnChange(k, fn, 2000), { initialProps: { k: "a" } });
  expect(fn).toHaveBeenCalledTimes(0);
  rerender({ k: "b" });
  expect(fn).toHaveBeenCalledTimes(1);
  rerender({ k: "c" });
  rerender({ k: "d" });
  expect(fn).toHaveBeenCalledTimes(1);
  vi.advanceTimersByTime(2000);
  expect(fn).toHaveBeenCalledTimes(2);
  rerender({ k: "d" });
  vi.advanceTimersByTime(5000);
  expect(fn).toHaveBeenCalledTimes(2);
});
