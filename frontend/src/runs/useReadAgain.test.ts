// @vitest-environment jsdom
import { expect, test, vi } from "vitest";
import { act, renderHook } from "@testing-library/react";
import { useReadAgain } from "./useReadAgain";

test("reads again only once no read is in flight, and hands on the answer that read brought", () => {
  const refetch = vi.fn();
  const onAnswer = vi.fn();
  const { result, rerender } = renderHook(({ data, fetching }) => useReadAgain(data, fetching, refetch, onAnswer), {
    initialProps: { data: { v: 1 } as { v: number } | undefined, fetching: true },
  });
  act(() => result.current());
  expect(refetch).not.toHaveBeenCalled(); // a read is in flight: its answer may predate the change
  const answered = { v: 2 };
  rerender({ data: answered, fetching: false }); // that read's answer
  expect(onAnswer).not.toHaveBeenCalled();
  expect(refetch).toHaveBeenCalledTimes(1);
  expect(refetch).toHaveBeenCalledWith({ requestPolicy: "network-only" });
  rerender({ data: answered, fetching: true }); // the new read
  expect(onAnswer).not.toHaveBeenCalled();
  rerender({ data: { v: 3 }, fetching: false });
  expect(onAnswer).toHaveBeenCalledTimes(1);
  expect(onAnswer).toHaveBeenCalledWith({ v: 3 });
  rerender({ data: { v: 4 }, fetching: false });
  expect(onAnswer).toHaveBeenCalledTimes(1);
  expect(refetch).toHaveBeenCalledTimes(1);
});
