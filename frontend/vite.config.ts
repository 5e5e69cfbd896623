import { defineConfig } from "vite";
import { resolve } from "node:path";

// The dev server proxies /graphql (HTTP and websockets) to a running `cascade serve`.
const backend = process.env.CASCADE_URL ?? "http://127.0.0.1:8080";

export default defineConfig({
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: "dist",
    // dist/.gitkeep is committed so //go:embed always has a directory; the build empties
    // dist and copies it back from public/.
    emptyOutDir: true,
    chunkSizeWarningLimit: 6000,
    rollupOptions: {
      // GraphiQL's dependencies carry "use client" directives, which mean nothing in a SPA.
      onwarn(w, warn) {
        if (w.code === "MODULE_LEVEL_DIRECTIVE") return;
        warn(w);
      },
      input: {
        main: resolve(import.meta.dirname, "index.html"),
        playground: resolve(import.meta.dirname, "playground.html"),
      },
    },
  },
  server: {
    proxy: { "/graphql": { target: backend, ws: true, changeOrigin: true } },
  },
  test: {
    // Most tests are of pure functions: Node. A test that renders or needs the DOM says so
    // on its first line (// @vitest-environment jsdom): jsdom's set-up per file was more than
    // half of the unit tests' time.
    environment: "node",
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
