import type { CodegenConfig } from "@graphql-codegen/cli";
const documents = ["src/**/*.{ts,tsx}", "!src/gql/**"];

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
