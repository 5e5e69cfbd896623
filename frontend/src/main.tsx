import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { Provider } from "urql";
import { App } from "./App";
import { createCascadeClient, createLiveSocket } from "./api/client";
import { LiveSocketContext } from "./api/useEvents";
import "./styles.css";

const ws = createLiveSocket();
const client = createCascadeClient();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Provider value={client}>
      <LiveSocketContext.Provider value={ws}>
        <App />
      </LiveSocketContext.Provider>
    </Provider>
  </StrictMode>,
);
