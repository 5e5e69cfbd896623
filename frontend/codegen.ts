import type { CodegenConfig } from "@graphql-codegen/cli";
import { hasRuns } from "./scripts/schema-features.mjs";

// Run screens query types that the server's schema may not have yet. Their documents
// (src/runs/**/*.graphql.ts) are only checked against the schema when it has them.
const documents = ["src/**/*.{ts,tsx}", "!src/gql/**"];
if (!hasRuns()) documents.push("!src/runs/live/**");

const config: CodegenConfig = {
  schema: "../graph/schema/*.graphqls",
  documents,
  ignoreNoDocuments: true,
  generates: {
    "src/gql/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { Int64: "number", Time: "string", ID: "string" },
      },
    },
  },
};
export default config;
