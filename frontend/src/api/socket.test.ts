import { afterEach, describe, expect, it, vi } from "vitest";
import { AuthStore } from "./auth";
import { createLiveSocket } from "./client";
import { ConnectionStore } from "./connection";
import { disposeSocket } from "./socket";

/** A WebSocket the test plays the server of: it opens, and closes, when told. */
class FakeSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  static made: FakeSocket[] = [];
  readyState = FakeSocket.CONNECTING;
  sent: string[] = [];
  onopen: (() => void) | null = null;
  onclose: ((e: { code: number; reason: string; wasClean: boolean }) => void) | null = null;
  onerror: ((e: unknown) => void) | null = null;
  onmessage: ((e: { data: string }) => void) | null = null;
  constructor(
    readonly url: string,
    readonly protocol: string,
  ) {
    FakeSocket.made.push(this);
  }
  send(data: string) {
    this.sent.push(data);
  }
  open() {
    this.readyState = FakeSocket.OPEN;
    this.onopen?.();
  }
  close(code = 1000, reason = "") {
    if (this.readyState === FakeSocket.CLOSED) return;
    this.readyState = FakeSocket.CLOSED;
    this.onclose?.({ code, reason, wasClean: true });
  }
}

/** Node's process, which the tests run in (the UI's tsconfig has no Node types). */
const node = (globalThis as unknown as { process: { on: Listen; off: Listen } }).process;
type Listen = (event: "unhandledRejection", listener: (reason: unknown) => void) => void;

const ticks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

describe("disposeSocket", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    FakeSocket.made = [];
  });

  // The flake behind e2e/auth.test.mjs's "pageerror: CloseEvent": a token entered while the
  // first socket's connection_init was unanswered; the server's 4401 came after the dispose.
  it("leaves no unhandled rejection when the server refuses the connection after the dispose", async () => {
    vi.stubGlobal("window", { location: { protocol: "http:", host: "cascade.test" } });
    vi.stubGlobal("WebSocket", FakeSocket);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    node.on("unhandledRejection", onUnhandled);
    try {
      const auth = new AuthStore(null);
      const ws = createLiveSocket(new ConnectionStore(), auth);
      await ticks();
      const [socket] = FakeSocket.made;
      socket.open();
      await ticks();
      expect(socket.sent.map((m) => JSON.parse(m).type)).toEqual(["connection_init"]);

      disposeSocket(ws);
      socket.close(4401, "UNAUTHENTICATED: a token is needed");
      await ticks(20);
      expect(unhandled).toEqual([]);
      expect(socket.readyState).toBe(FakeSocket.CLOSED);
    } finally {
      node.off("unhandledRejection", onUnhandled);
    }
  });
});
