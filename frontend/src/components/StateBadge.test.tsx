// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { StateBadge, TRACE_STATES } from "./StateBadge";

afterEach(cleanup);

describe("StateBadge", () => {
  it("names every state in words, with its own icon, not by colour alone", () => {
    const icons = new Set<string>();
    const labels = new Set<string>();
    for (const state of Object.keys(TRACE_STATES)) {
      render(<StateBadge state={state} />);
      const badge = screen.getByLabelText(`State: ${TRACE_STATES[state as keyof typeof TRACE_STATES].label}`);
      expect(badge.textContent).toContain(TRACE_STATES[state as keyof typeof TRACE_STATES].label);
      expect(badge.getAttribute("title")).toBeTruthy();
      expect(badge.className).toContain(`badge-${state.toLowerCase()}`);
      icons.add(TRACE_STATES[state as keyof typeof TRACE_STATES].icon);
      labels.add(badge.textContent!);
      cleanup();
    }
    expect(icons.size).toBe(4);
    expect(labels.size).toBe(4);
  });

  it("the icon is hidden from screen readers, the label is not", () => {
    render(<StateBadge state="FAILED" />);
    const badge = screen.getByLabelText("State: Failed");
    expect(badge.querySelector("[aria-hidden=true]")?.textContent).toBe("✕");
  });

  it("shows an unknown state as it is", () => {
    render(<StateBadge state="ARCHIVED" />);
    expect(screen.getByLabelText("State: ARCHIVED").textContent).toContain("ARCHIVED");
  });
});
