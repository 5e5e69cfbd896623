import { createContext, useContext, useEffect, useRef } from "react";
import { print } from "graphql";
import type { Client as WsClient } from "graphql-ws";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import { connection, type ConnectionStore } from "./connection";

/** The websocket client live events come over. */
export const LiveSocketContext = createContext<WsClient | null>(null);

/**
 * Subscribe for as long as the component is mounted (and not paused), handing each event to
 * onEvent. Events go straight from the websocket to the component, not through urql's
 * document cache (which would refetch every query of that type on each event). The
 * websocket client resubscribes by itself after a reconnect. Queries re-run once a new
 * subscription has settled, since the server acknowledges none. A subscription the server
 * completes (it closes a subscriber that fell too far behind) is started again here at once,
 * and every live query re-runs, since events were lost. onRestart, when given, runs first:
 * a stream that starts over (a log sends its lines from the beginning) resets with it.
 */
export function useEvents<Data, Variables extends Record<string, unknown>>(
  query: TypedDocumentNode<Data, Variables>,
  variables: Variables,
  onEvent: (data: Data) => void,
  pause = false,
  onRestart?: () => void,
  store: ConnectionStore = connection,
): void {
  const ws = useContext(LiveSocketContext);
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const restart = useRef(onRestart);
  restart.current = onRestart;
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (pause || !ws) return;
    let stopped = false;
    let unsubscribe = () => {};
    const start = () => {
      unsubscribe = ws.subscribe<Data>(
        { query: print(query), variables: JSON.parse(key) as Variables },
        {
          next: (r) => {
            if (r.data) handler.current(r.data);
          },
          error: (e) => console.warn("subscription error", e),
          complete: () => {
            // Our own unsubscribe completes too.
            if (stopped) return;
            restart.current?.();
            start();
            store.resubscribed();
          },
        },
      );
    };
    start();
    store.subscribed();
    return () => {
      stopped = true;
      unsubscribe();
    };
  }, [ws, query, key, pause, store]);
}
