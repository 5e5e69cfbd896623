import { useSyncExternalStore } from "react";

/** What the UI knows about the websocket that carries live updates. */
export type ConnectionStatus = "connecting" | "connected" | "reconnecting";

export interface ConnectionState {
  status: ConnectionStatus;
  /** Increments on every (re)connect after the first: queries re-run when it changes. */
  epoch: number;
  /** When the next retry happens (ms since epoch), while reconnecting. */
  retryAt: number | null;
}

type Listener = () => void;

export class ConnectionStore {
  private state: ConnectionState = { status: "connecting", epoch: 0, retryAt: null };
  private listeners = new Set<Listener>();
  private everConnected = false;

  get = (): ConnectionState => this.state;

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  connected(): void {
    const epoch = this.everConnected ? this.state.epoch + 1 : this.state.epoch;
    this.everConnected = true;
    this.set({ status: "connected", epoch, retryAt: null });
  }

  lost(): void {
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
