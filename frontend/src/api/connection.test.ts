import { describe, expect, it, vi } from "vitest";
import { ConnectionStore, SETTLE_MS } from "./connection";
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

  it("re-runs queries once more after a reconnect settles, not after a first connect", () => {
    vi.useFakeTimers();
    try {
      const s = new ConnectionStore();
      s.connected();
      vi.advanceTimersByTime(SETTLE_MS);
      expect(s.get().epoch).toBe(0);
      s.lost();
      s.connected();
      expect(s.get().epoch).toBe(1);
      vi.advanceTimersByTime(SETTLE_MS);
      expect(s.get()).toMatchObject({ status: "connected", epoch: 2 });
      // Lost again before it settled: no late bump.
      s.lost();
      s.connected();
      s.lost();
      vi.advanceTimersByTime(SETTLE_MS);
      expect(s.get()).toMatchObject({ status: "reconnecting", epoch: 3 });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("ConnectionStore.resubscribed", () => {
  it("re-runs queries at once and once more when settled, only while connected", () => {
    vi.useFakeTimers();
    try {
      const s = new ConnectionStore();
      s.connected();
      s.resubscribed();
      expect(s.get()).toMatchObject({ status: "connected", epoch: 1 });
      vi.advanceTimersByTime(SETTLE_MS);
      expect(s.get().epoch).toBe(2);
      // Offline, the reconnect re-runs them; a subscription the socket's end completed is no news.
      s.lost();
      s.resubscribed();
      expect(s.get()).toMatchObject({ status: "reconnecting", epoch: 2 });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("ConnectionStore.subscribed", () => {
  it("re-runs queries once when a new subscription settled", () => {
    vi.useFakeTimers();
    try {
      const s = new ConnectionStore();
      s.connected();
      s.subscribed();
      s.subscribed();
      expect(s.get().epoch).toBe(0);
      vi.advanceTimersByTime(SETTLE_MS);
      expect(s.get().epoch).toBe(1);
      vi.advanceTimersByTime(SETTLE_MS);
      expect(s.get().epoch).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("settles after the first connect when subscriptions started before it", () => {
    vi.useFakeTimers();
    try {
      const s = new ConnectionStore();
      s.subscribed();
      s.connected();
      expect(s.get().epoch).toBe(0);
      vi.advanceTimersByTime(SETTLE_MS);
      expect(s.get().epoch).toBe(1);
    } finally {
      vi.useRealTimers();
    }
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
