import { createContext, useContext, useEffect, useRef } from "react";
import { print } from "graphql";
import type { Client as WsClient } from "graphql-ws";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";

/** The websocket client live events come over. */
export const LiveSocketContext = createContext<WsClient | null>(null);

/**
 * Subscribe for as long as the component is mounted (and not paused), handing each event to
 * onEvent. Events go straight from the websocket to the component, not through urql's
 * document cache (which would refetch every query of that type on each event). The
 * websocket client resubscribes by itself after a reconnect.
 */
export function useEvents<Data, Variables extends Record<string, unknown>>(
  query: TypedDocumentNode<Data, Variables>,
  variables: Variables,
  onEvent: (data: Data) => void,
  pause = false,
): void {
  const ws = useContext(LiveSocketContext);
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (pause || !ws) return;
    return ws.subscribe<Data>(
      { query: print(query), variables: JSON.parse(key) as Variables },
      {
        next: (r) => {
          if (r.data) handler.current(r.data);
        },
        error: (e) => console.warn("subscription error", e),
        complete: () => {},
      },
    );
  }, [ws, query, key, pause]);
}
