import { Client, cacheExchange, fetchExchange, mapExchange } from "urql";
import { createClient as createWsClient, type Client as WsClient } from "graphql-ws";
import { backoffMs, graphqlHttpUrl, graphqlWsUrl } from "./endpoint";
import { connection, type ConnectionStore } from "./connection";
import { auth as defaultAuth, CLOSE_UNAUTHORIZED, errorWithCode, type AuthStore } from "./auth";

const PING_EVERY_MS = 10_000;
const PONG_WITHIN_MS = 5_000;

/**
 * The websocket client for subscriptions. It connects eagerly so the UI can say when it is
 * offline, retries forever with backoff, and closes a socket whose pongs stop coming.
 */
export function createLiveSocket(store: ConnectionStore = connection, auth: AuthStore = defaultAuth): WsClient {
  let pongTimer: ReturnType<typeof setTimeout> | undefined;
  let activeSocket: WebSocket | undefined;
  const generation = auth.get().generation;
  return createWsClient({
    url: graphqlWsUrl(),
    connectionParams: () => auth.connectionParams(),
    lazy: false,
    keepAlive: PING_EVERY_MS,
    retryAttempts: Infinity,
    shouldRetry: () => true,
    // A close the client does not retry ends here: 4401 asks for a token (see closed).
    onNonLazyError: (e) => {
      if ((e as CloseEvent | undefined)?.code !== CLOSE_UNAUTHORIZED) console.error("live updates stopped:", e);
    },
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
      closed: (event) => {
        activeSocket = undefined;
        clearTimeout(pongTimer);
        store.lost();
        // No token, or a wrong one: the client does not retry; a new one starts with the token.
        const e = event as CloseEvent | undefined;
        if (e?.code === CLOSE_UNAUTHORIZED) auth.unauthenticated(generation, e.reason.replace(/^UNAUTHENTICATED: /, "") || null);
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

/**
 * Queries and mutations over HTTP, with the token; subscriptions go over the websocket (see
 * useEvents). An UNAUTHENTICATED answer asks for a token.
 */
export function createCascadeClient(auth: AuthStore = defaultAuth): Client {
  const generation = auth.get().generation;
  return new Client({
    url: graphqlHttpUrl(),
    requestPolicy: "cache-and-network",
    fetchOptions: () => ({ headers: auth.headers() }),
    exchanges: [
      mapExchange({
        onError(error) {
          const e = errorWithCode(error.graphQLErrors, "UNAUTHENTICATED");
          if (e || error.response?.status === 401) auth.unauthenticated(generation, e?.message ?? null);
        },
      }),
      cacheExchange,
      fetchExchange,
    ],
  });
}
