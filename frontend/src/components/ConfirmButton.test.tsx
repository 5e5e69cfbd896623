// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { ConfirmButton } from "./ConfirmButton";

afterEach(cleanup);

function setup(busy = false) {
  const onConfirm = vi.fn();
  render(
    <ConfirmButton
      label="Cancel run"
      busyLabel="Cancelling…"
      busy={busy}
      question="Cancel this run?"
      detail="It stops."
      confirmLabel="Yes, cancel run"
      keepLabel="Keep running"
      onConfirm={onConfirm}
    />,
  );
  return onConfirm;
}

describe("ConfirmButton", () => {
  it("asks before it acts, with the harmless choice focused", () => {
    const onConfirm = setup();
    fireEvent.click(screen.getByRole("button", { name: "Cancel run" }));
    expect(onConfirm).not.toHaveBeenCalled();
    const group = screen.getByRole("group", { name: "Cancel this run?" });
    expect(group.getAttribute("aria-describedby")).toBeTruthy();
    expect(document.getElementById(group.getAttribute("aria-describedby")!)?.textContent).toBe("It stops.");
    expect(document.activeElement).toBe(screen.getByRole("button", { name: "Keep running" }));
    fireEvent.click(screen.getByRole("button", { name: "Yes, cancel run" }));
    expect(onConfirm).toHaveBeenCalledTimes(1);
    expect(screen.queryByRole("group")).toBeNull();
    expect(document.activeElement).toBe(screen.getByRole("button", { name: "Cancel run" }));
  });

  it("goes back with Keep or Escape, the focus on the button again", () => {
    const onConfirm = setup();
    fireEvent.click(screen.getByRole("button", { name: "Cancel run" }));
    fireEvent.click(screen.getByRole("button", { name: "Keep running" }));
    expect(screen.queryByRole("group")).toBeNull();
    expect(document.activeElement).toBe(screen.getByRole("button", { name: "Cancel run" }));
    fireEvent.click(screen.getByRole("button", { name: "Cancel run" }));
    fireEvent.keyDown(screen.getByRole("button", { name: "Keep running" }), { key: "Escape" });
    expect(screen.queryByRole("group")).toBeNull();
    expect(onConfirm).not.toHaveBeenCalled();
  });

  it("is disabled while its action runs", () => {
    setup(true);
    expect((screen.getByRole("button", { name: "Cancelling…" }) as HTMLButtonElement).disabled).toBe(true);
  });
});
