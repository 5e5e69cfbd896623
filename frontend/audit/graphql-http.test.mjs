// GraphQL over HTTP, by its spec: every audit of graphql-http's
// serverAudits against a real `cascade serve` ($CASCADE_BIN) must be `ok`;
// a warning or a notice fails like an error.
//   CASCADE_BIN=/path/to/cascade npm run graphql-audit
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { serverAudits } from "graphql-http";
import { startServer } from "../e2e/harness.mjs";

const { version } = createRequire(import.meta.url)("graphql-http/package.json");

describe(`graphql-http ${version}'s server audits`, () => {
  let server;
  let ok = 0;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    console.log(`graphql-http ${version} server audits: ${ok} of ${audits.length} ok`);
    await server?.cleanup();
  });

  const audits = serverAudits({ url: () => `${server.url}/graphql` });
  for (const audit of audits) {
    test(`${audit.id} ${audit.name}`, async () => {
      const result = await audit.fn();
      if (result.status === "ok") return void ok++;
      const body = await result.response.text().catch((e) => `(body unreadable: ${e.message})`);
      assert.fail(
        `${result.status}: ${result.reason}\n` +
          `response: ${result.response.status} ${result.response.headers.get("content-type")}\n${body}`,
      );
    });
  }

  test(`all ${audits.length} audits ran`, () => {
    // The count pins the suite the lockfile's version brings; a new version
    // with more audits must be looked at, not passed by default.
    assert.equal(audits.length, 61);
  });
});
