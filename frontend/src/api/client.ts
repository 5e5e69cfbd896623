import { Client, cacheExchange, fetchExchange } from "urql";
import { createClient as createWsClient, type Client as WsClient } from "graphql-ws";
import { backoffMs, graphqlHttpUrl, graphqlWsUrl } from "./endpoint";
import { connection, type ConnectionStore } from "./connection";

const PING_EVERY_MS = 10_000;
const PONG_WITHIN_MS = 5_000;

/**
 * The websocket client for subscriptions. It connects eagerly so the UI can say when it is
 * offline, retries forever with backoff, and closes a socket whose pongs stop coming.
 */
export function createLiveSocket(store: ConnectionStore = connection): WsClient {
  let pongTimer: ReturnType<typeof setTimeout> | undefined;
  let activeSocket: WebSocket | undefined;
  return createWsClient({
    url: graphqlWsUrl(),
    lazy: false,
    keepAlive: PING_EVERY_MS,
    retryAttempts: Infinity,
    shouldRetry: () => true,
    retryWait: async (retries) => {
      const wait = backoffMs(retries);
      store.retrying(Date.now() + wait);
      await new Promise((r) => setTimeout(r, wait));
    },
    on: {
      connected: (socket) => {
        activeSocket = socket as WebSocket;
        store.connected();
      },
      closed: () => {
        activeSocket = undefined;
        clearTimeout(pongTimer);
        store.lost();
      },
      error: () => store.lost(),
      ping: (received) => {
        if (received) return;
        pongTimer = setTimeout(() => {
          if (activeSocket?.readyState === WebSocket.OPEN) activeSocket.close(4408, "Pong timeout");
        }, PONG_WITHIN_MS);
      },
      pong: (received) => {
        if (received) clearTimeout(pongTimer);
      },
    },
  });
}

/** Queries and mutations over HTTP; subscriptions go over the websocket (see useEvents). */
export function createCascadeClient(): Client {
  return new Client({
    url: graphqlHttpUrl(),
    requestPolicy: "cache-and-network",
    exchanges: [
      cacheExchange,
      fetchExchange,
    ],
  });
}
