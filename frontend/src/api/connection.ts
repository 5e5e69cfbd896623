import { useSyncExternalStore } from "react";

/** What the UI knows about the websocket that carries live updates. */
export type ConnectionStatus = "connecting" | "connected" | "reconnecting";

export interface ConnectionState {
  status: ConnectionStatus;
  /**
   * Increments on every (re)connect after the first, and when the server dropped a
   * subscription that fell behind: queries re-run when it changes.
   */
  epoch: number;
  /** When the next retry happens (ms since epoch), while reconnecting. */
  retryAt: number | null;
}

type Listener = () => void;

/**
 * After a reconnect or a resubscription, queries re-run at once and once more SETTLE_MS
 * later: the protocol does not acknowledge a subscription, so a change that lands between
 * the refetch and the server registering the subscription would otherwise be missed until
 * the next change.
 */
export const SETTLE_MS = 1000;

export class ConnectionStore {
  private state: ConnectionState = { status: "connecting", epoch: 0, retryAt: null };
  private listeners = new Set<Listener>();
  private everConnected = false;
  private settle: ReturnType<typeof setTimeout> | null = null;
  private settleOnConnect = false;

  get = (): ConnectionState => this.state;

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  connected(): void {
    const reconnect = this.everConnected;
    const epoch = reconnect ? this.state.epoch + 1 : this.state.epoch;
    this.everConnected = true;
    this.set({ status: "connected", epoch, retryAt: null });
    if (reconnect || this.settleOnConnect) this.settleLater();
    this.settleOnConnect = false;
  }

  /**
   * A subscription the server completed (it closes subscribers that fall too far behind)
   * was started again: queries re-run to fetch what its events would have said.
   */
  resubscribed(): void {
    if (this.state.status !== "connected") return; // the reconnect re-runs them
    this.set({ ...this.state, epoch: this.state.epoch + 1 });
    this.settleLater();
  }

  /**
   * A subscription started: queries re-run once it has settled, in case a change landed
   * between their fetch and the server registering the subscription.
   */
  subscribed(): void {
    if (this.state.status === "connected") this.settleLater();
    else this.settleOnConnect = true;
  }

  private settleLater(): void {
    this.clearSettle();
    this.settle = setTimeout(() => {
      this.settle = null;
      if (this.state.status === "connected") this.set({ ...this.state, epoch: this.state.epoch + 1 });
    }, SETTLE_MS);
  }

  private clearSettle(): void {
    if (this.settle !== null) clearTimeout(this.settle);
    this.settle = null;
  }

  lost(): void {
    this.clearSettle();
    if (this.state.status === "reconnecting") return;
    this.set({ ...this.state, status: this.everConnected ? "reconnecting" : "connecting" });
  }

  retrying(retryAt: number): void {
    this.set({ ...this.state, status: this.everConnected ? "reconnecting" : "connecting", retryAt });
  }

  private set(s: ConnectionState): void {
    this.state = s;
    this.listeners.forEach((l) => l());
  }
}

export const connection = new ConnectionStore();

export function useConnection(store: ConnectionStore = connection): ConnectionState {
  return useSyncExternalStore(store.subscribe, store.get, store.get);
}
