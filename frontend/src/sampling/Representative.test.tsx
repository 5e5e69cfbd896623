// @vitest-environment jsdom
import { afterEach, expect, test } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { Representative } from "./Representative";

afterEach(cleanup);

const rep = (launch: number, warmup: number[]) => ({
  launch,
  kernelId: launch + 1,
  context: null,
  weight: 1,
  durationNs: null,
  instructions: 736,
  warmup: warmup.map((w) => ({ launch: w, kernelId: w + 1 })),
});

test("a representative after its warm-up lists the launches before it", () => {
  render(<Representative r={rep(9, [7, 8])} planWarmup={2} />);
  expect(screen.getByTestId("representative").textContent).toBe("#9 · id 10 · ×1 · after #7, #8");
  expect(screen.queryByTestId("no-warmup")).toBeNull();
});

test("a representative a plan with warm-up simulates without it says so, and why in its title", () => {
  render(<Representative r={rep(25, [])} planWarmup={26} />);
  const none = screen.getByTestId("no-warmup");
  expect(none.textContent).toBe(" · no warm-up");
  expect(none.title).toMatch(/error bound/);
});

test("nothing is said of warm-up at the trace's first launch, or in a plan without warm-up", () => {
  render(
    <>
      <Representative r={rep(0, [])} planWarmup={26} />
      <Representative r={rep(5, [])} planWarmup={0} />
    </>,
  );
  expect(screen.queryByTestId("no-warmup")).toBeNull();
});
