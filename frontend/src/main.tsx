import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import type { Client as WsClient } from "graphql-ws";
import { Provider, type Client } from "urql";
import { App } from "./App";
import { auth, useAuth } from "./api/auth";
import { createCascadeClient, createLiveSocket } from "./api/client";
import { disposeSocket } from "./api/socket";
import { LiveSocketContext } from "./api/useEvents";
import { TokenDialog } from "./components/TokenDialog";
import "./styles.css";

/**
 * The clients of one token: entering a token replaces them (closing the old websocket) and
 * remounts the app, so every query and subscription starts again with it. They live outside
 * React, so StrictMode's trial unmount does not close the socket.
 */
let clients: { generation: number; ws: WsClient; client: Client } | null = null;
function clientsFor(generation: number) {
  if (clients?.generation !== generation) {
    disposeSocket(clients?.ws);
    clients = { generation, ws: createLiveSocket(), client: createCascadeClient() };
  }
  return clients;
}

function Root() {
  const { generation } = useAuth();
  const { ws, client } = clientsFor(generation);
  return (
    <>
      <TokenDialog store={auth} />
      <Provider value={client}>
        <LiveSocketContext.Provider value={ws}>
          <App key={generation} />
        </LiveSocketContext.Provider>
      </Provider>
    </>
  );
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);
