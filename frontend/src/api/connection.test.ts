import { describe, expect, it } from "vitest";
import { ConnectionStore } from "./connection";
import { backoffMs, graphqlWsUrl } from "./endpoint";

describe("ConnectionStore", () => {
  it("bumps the epoch on each reconnect, not on the first connect", () => {
    const s = new ConnectionStore();
    let calls = 0;
    s.subscribe(() => calls++);
    expect(s.get().status).toBe("connecting");
    s.connected();
    expect(s.get()).toMatchObject({ status: "connected", epoch: 0 });
    s.lost();
    expect(s.get().status).toBe("reconnecting");
    s.retrying(123);
    expect(s.get().retryAt).toBe(123);
    s.connected();
    expect(s.get()).toMatchObject({ status: "connected", epoch: 1, retryAt: null });
    expect(calls).toBe(4);
  });
});

describe("endpoint", () => {
  it("backs off exponentially up to 10 s", () => {
    const mid = () => 0.5;
    expect(backoffMs(0, mid)).toBe(375);
    expect(backoffMs(1, mid)).toBe(750);
    expect(backoffMs(20, mid)).toBe(7500);
    expect(backoffMs(20, () => 1)).toBe(10000);
  });
  it("speaks ws on http and wss on https", () => {
    expect(graphqlWsUrl({ protocol: "http:", host: "h:1" } as Location)).toBe("ws://h:1/graphql");
    expect(graphqlWsUrl({ protocol: "https:", host: "h" } as Location)).toBe("wss://h/graphql");
  });
});
