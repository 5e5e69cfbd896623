// End-to-end: Delete on a trace's page asks first; "Keep the trace" keeps it, "Yes, delete trace"
// removes its directory from the bucket (removeTrace) and goes back to the traces list. The
// sample trace has no Delete.
//   CASCADE_BIN=/path/to/cascade npm run e2e -- e2e/deletetrace.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gql, launchBrowser, screenshot, startServer, upload, waitReady, watchErrors } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ID = "qs-delete";

describe("deleting a trace", () => {
  let server;
  let browser;
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    await upload(server, join(repo, "samples", "quickstart"), ID);
    await waitReady(server, ID);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  test("Delete asks, Keep keeps, Yes deletes and goes back to the list", { timeout: 60_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${ID}`);
    await page.locator('.trace-page .toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });

    await page.getByRole("button", { name: "Delete" }).click();
    const ask = page.getByRole("group", { name: "Delete this trace?" });
    await ask.waitFor();
    await screenshot(page, "40-delete-trace-asks");
    await ask.getByRole("button", { name: "Keep the trace" }).click();
    await page.getByRole("button", { name: "Delete" }).waitFor();
    assert.ok(existsSync(join(server.bucket, ID)), "Keep the trace deleted it");

    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("group", { name: "Delete this trace?" }).getByRole("button", { name: "Yes, delete trace" }).click();
    await page.waitForURL(`${server.url}/`);
    await page.getByRole("link", { name: "sample" }).first().waitFor();
    assert.equal(await page.getByRole("link", { name: ID }).count(), 0, "the deleted trace is still listed");
    assert.equal((await gql(server, `query($id: ID!) { trace(id: $id) { id } }`, { id: ID })).trace, null);
    assert.ok(!existsSync(join(server.bucket, ID)), "its directory is still in the bucket");

    await page.goto(`${server.url}/traces/sample`);
    await page.locator(".trace-page .toolbar .tag").getByText("sample").waitFor();
    assert.equal(await page.getByRole("button", { name: "Delete" }).count(), 0, "the sample trace has Delete");
    assert.deepEqual(errors, []);
  });
});
