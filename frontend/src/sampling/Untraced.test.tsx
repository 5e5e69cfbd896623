// @vitest-environment jsdom
import { afterEach, expect, test } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { launchName, UntracedBadge, UntracedWarning } from "./Untraced";

afterEach(cleanup);

const u = {
  count: 3,
  note: 'This plan simulates 3 launches that trace "less" has no kernel trace of (kernel ids 4@0xb, 9, 10).',
  launches: [
    { launch: 3, kernelId: 4, context: "0xb" },
    { launch: 8, kernelId: 9, context: null },
  ],
  ranges: [{ context: "0xb", start: 4, end: 5 }, { context: null, start: 9, end: 10 }],
};

test("a plan that simulates traced launches only shows nothing", () => {
  const { container } = render(
    <>
      <UntracedBadge u={null} />
      <UntracedWarning u={null} />
    </>,
  );
  expect(container.textContent).toBe("");
});

test("the plan list marks a plan that simulates untraced launches, with the note as its title", () => {
  render(<UntracedBadge u={u} />);
  const badge = screen.getByTestId("plan-untraced");
  expect(badge.textContent).toContain("3 untraced");
  expect(badge.getAttribute("title")).toBe(u.note);
});

test("the plan view says why and names the launches, by id and context, and the ranges", () => {
  render(<UntracedWarning u={u} />);
  expect(screen.getByTestId("plan-untraced-warning").textContent).toContain(u.note);
  expect(screen.getByTestId("plan-untraced-launches").textContent).toBe("Untraced launches: #3 (id 4@0xb), #8 (id 9) and 1 more");
  expect(screen.getByTestId("plan-untraced-ranges").textContent).toBe("Trace ranges holding them: 4–5@0xb, 9–10");
  expect(launchName({ kernelId: 7 })).toBe("7");
});
