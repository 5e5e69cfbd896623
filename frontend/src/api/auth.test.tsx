// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { AuthStore, TOKEN_KEY } from "./auth";
import { TokenDialog } from "../components/TokenDialog";

afterEach(cleanup);

function memoryStorage() {
  const m = new Map<string, string>();
  return {
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => void m.set(k, v),
    removeItem: (k: string) => void m.delete(k),
    map: m,
  };
}

describe("AuthStore", () => {
  it("sends nothing until a token is entered, then sends it on HTTP and in connection_init", () => {
    const storage = memoryStorage();
    const s = new AuthStore(storage);
    expect(s.headers()).toEqual({});
    expect(s.connectionParams()).toEqual({});
    s.submit("  secret-token  ");
    expect(storage.map.get(TOKEN_KEY)).toBe("secret-token");
    expect(s.headers()).toEqual({ Authorization: "Bearer secret-token" });
    expect(s.connectionParams()).toEqual({ authorization: "Bearer secret-token" });
    expect(s.get().generation).toBe(1);
  });

  it("asks once, drops a refused token, and ignores refusals of an older generation", () => {
    const storage = memoryStorage();
    const s = new AuthStore(storage);
    let calls = 0;
    s.subscribe(() => calls++);
    s.unauthenticated(0, "no token");
    s.unauthenticated(0, "no token");
    // Nothing was sent: there is nothing to explain.
    expect(s.get()).toMatchObject({ needed: true, reason: null });
    expect(calls).toBe(1);
    s.submit("wrong");
    // A request sent before the token was entered comes back refused: not asked again.
    s.unauthenticated(0, "no token");
    expect(s.get().needed).toBe(false);
    s.unauthenticated(1, "the token is not valid");
    expect(s.get()).toMatchObject({ needed: true, reason: "the token is not valid" });
    expect(s.token()).toBeNull();
  });
});

describe("TokenDialog", () => {
  it("appears when a token is needed, says why, and keeps what is entered", () => {
    const storage = memoryStorage();
    storage.setItem(TOKEN_KEY, "stale-token");
    const s = new AuthStore(storage);
    render(<TokenDialog store={s} />);
    expect(screen.queryByRole("dialog")).toBeNull();
    act(() => s.unauthenticated(0, "the token is not valid"));
    const dialog = screen.getByRole("dialog", { name: "Access token needed" });
    expect(dialog.textContent).toContain("The server said: the token is not valid");
    const button = screen.getByRole("button", { name: "Continue" }) as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    fireEvent.change(screen.getByLabelText("Token"), { target: { value: "entered-token" } });
    fireEvent.click(button);
    expect(storage.map.get(TOKEN_KEY)).toBe("entered-token");
    expect(screen.queryByRole("dialog")).toBeNull();
  });
});
