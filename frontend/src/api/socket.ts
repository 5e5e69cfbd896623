import type { Client as WsClient } from "graphql-ws";

/**
 * Closes a websocket client that a new token replaces. graphql-ws's dispose waits for the
 * connection in progress, and rejects with its close event when the server refuses it: a
 * token entered while the old client's connection_init (without one) was still unanswered
 * gets the 4401 after the dispose. That socket is closed already and nothing is lost, so the
 * rejection is expected here; left unhandled it reached the page as an uncaught CloseEvent.
 */
export function disposeSocket(ws: WsClient | undefined): void {
  Promise.resolve(ws?.dispose()).catch(() => {});
}
