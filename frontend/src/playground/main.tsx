import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { GraphiQL } from "graphiql";
import { createGraphiQLFetcher, type Fetcher } from "@graphiql/toolkit";
import { createClient, type Client as WsClient } from "graphql-ws";
import "graphiql/setup-workers/vite";
import "graphiql/style.css";
import { graphqlHttpUrl, graphqlWsUrl } from "../api/endpoint";
import { auth, authFetch, CLOSE_UNAUTHORIZED, useAuth } from "../api/auth";
import { disposeSocket } from "../api/socket";
import { TokenDialog } from "../components/TokenDialog";

// Queries and mutations over HTTP, subscriptions over graphql-transport-ws, both at /graphql,
// with the token when the server asks for one (the same dialog and session storage as the UI).
let current: { generation: number; ws: WsClient; fetcher: Fetcher } | null = null;
function fetcherFor(generation: number): Fetcher {
  if (current?.generation !== generation) {
    disposeSocket(current?.ws);
    const ws = createClient({
      url: graphqlWsUrl(),
      connectionParams: () => auth.connectionParams(),
      retryAttempts: Infinity,
      shouldRetry: () => true,
      onNonLazyError: () => {}, // a 4401 asks for a token; GraphiQL shows other errors itself
      on: {
        closed: (event) => {
          const e = event as CloseEvent | undefined;
          if (e?.code === CLOSE_UNAUTHORIZED) auth.unauthenticated(generation, e.reason.replace(/^UNAUTHENTICATED: /, "") || null);
        },
      },
    });
    const fetcher = createGraphiQLFetcher({ url: graphqlHttpUrl(), wsClient: ws, fetch: authFetch(auth, generation) });
    current = { generation, ws, fetcher };
  }
  return current.fetcher;
}

const defaultQuery = `# Cascade's GraphQL API. Ctrl-Enter runs the query.
query Traces {
  traces(first: 20) {
    totalCount
    nodes { id state model sourceGpu kernelCount bytes error }
  }
}

# subscription Live { traceUpdated(id: null) { id state kernelCount bytes } }
`;

// /playground?query=...&variables=... opens with that operation, so links can share one.
const params = new URLSearchParams(window.location.search);

function Playground() {
  const { generation } = useAuth();
  return (
    <>
      <TokenDialog store={auth} />
      {/* A new token fetches the schema again. */}
      <GraphiQL
        key={generation}
        fetcher={fetcherFor(generation)}
        defaultQuery={defaultQuery}
        initialQuery={params.get("query") ?? undefined}
        initialVariables={params.get("variables") ?? undefined}
      >
        {/* In the logo's place, top right: the way back to the app. */}
        <GraphiQL.Logo>
          <a className="graphiql-logo-link" href="/" title="Back to Cascade's web UI">
            <span aria-hidden="true">← </span>Cascade
          </a>
        </GraphiQL.Logo>
      </GraphiQL>
    </>
  );
}

createRoot(document.getElementById("playground")!).render(
  <StrictMode>
    <Playground />
  </StrictMode>,
);
