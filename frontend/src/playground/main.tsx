import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { GraphiQL } from "graphiql";
import { createGraphiQLFetcher } from "@graphiql/toolkit";
import { createClient } from "graphql-ws";
import "graphiql/setup-workers/vite";
import "graphiql/style.css";
import { graphqlHttpUrl, graphqlWsUrl } from "../api/endpoint";

// Queries and mutations over HTTP, subscriptions over graphql-transport-ws, both at /graphql.
const fetcher = createGraphiQLFetcher({
  url: graphqlHttpUrl(),
  wsClient: createClient({ url: graphqlWsUrl(), retryAttempts: Infinity, shouldRetry: () => true }),
});

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

createRoot(document.getElementById("playground")!).render(
  <StrictMode>
    <GraphiQL
      fetcher={fetcher}
      defaultQuery={defaultQuery}
      initialQuery={params.get("query") ?? undefined}
      initialVariables={params.get("variables") ?? undefined}
    />
  </StrictMode>,
);
