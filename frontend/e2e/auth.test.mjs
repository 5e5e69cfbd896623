// End-to-end for access control: a server with CASCADE_TOKEN and CASCADE_READONLY_TOKEN. The UI
// and the playground ask for the token once, keep it for the tab's session, and send it over
// HTTP and in the websocket's connection_init; a read-only token sees traces, and launching a
// run with it says plainly why it cannot.
//   CASCADE_BIN=/path/to/cascade npm run e2e -- e2e/auth.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchBrowser, screenshot, sleep, startServer, traceFiles, upload, watchErrors, writeTraceFile } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const RW = "e2e-read-write-token-0123456789";
const RO = "e2e-read-only-token-0123456789";
const QS = "qs-auth";

/** The browser logs the server's 401s and 403s as failed resources: those are expected here. */
const unexpected = (errors) => errors.filter((e) => !/status of 40[13] /.test(e));

describe("a server with tokens", () => {
  let server;
  let browser;
  before(async () => {
    server = await startServer({
      env: {
        CASCADE_TOKEN: RW,
        CASCADE_READONLY_TOKEN: RO,
        CASCADE_SIM_CONFIGS_DIR: process.env.CASCADE_SIM_CONFIGS_DIR ?? join(repo, "samples", "sim-configs"),
      },
    });
    browser = await launchBrowser();
    await upload(server, join(repo, "samples", "quickstart"), QS);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  test("the API refuses requests without the token", async () => {
    const r = await fetch(`${server.url}/graphql?query=${encodeURIComponent("{ traces { totalCount } }")}`);
    assert.equal(r.status, 401);
    const body = await r.json();
    assert.equal(body.errors[0].extensions.code, "UNAUTHENTICATED");
    // The UI's files load without one: it asks for the token itself.
    const ui = await fetch(server.url + "/", { headers: { Accept: "text/html" } });
    assert.equal(ui.status, 200);
  });

  test("the UI asks for the token once, then shows traces and follows them live", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(server.url + "/");
    const dialog = page.getByRole("dialog", { name: "Access token needed" });
    await dialog.waitFor();
    await screenshot(page, "40-token-dialog");

    // A wrong token: asked again, saying why.
    await dialog.getByLabel("Token").fill("not-the-token-0123456789");
    await dialog.getByRole("button", { name: "Continue" }).click();
    await dialog.getByText("The server said: the token is not valid").waitFor();

    await dialog.getByLabel("Token").fill(RW);
    await dialog.getByRole("button", { name: "Continue" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.locator(`tr[data-trace-id="${QS}"] [data-state="READY"]`).waitFor({ timeout: 30_000 });
    // The websocket is in too (connected means the server acknowledged its connection_init):
    // a new trace appears without a reload.
    await page.locator('[data-connection="connected"]').waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    const live = "auth-live";
    for (const f of traceFiles(live, 1)) await writeTraceFile(server.bucket, live, ...f);
    await page.locator(`tr[data-trace-id="${live}"]`).waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page reloaded");
    assert.equal(await page.evaluate(() => sessionStorage.getItem("cascade.token")), RW);
    await screenshot(page, "41-token-traces");

    // Kept for the session: a reload does not ask again.
    await page.reload();
    await page.locator(`tr[data-trace-id="${QS}"]`).waitFor();
    await page.locator('[data-connection="connected"]').waitFor();
    assert.equal(await dialog.count(), 0);
    assert.deepEqual(unexpected(errors), []);
    await page.close();
  });

  test("a read-only token sees traces, and launching a run says it needs the read-write token", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${QS}/new-run`);
    const dialog = page.getByRole("dialog", { name: "Access token needed" });
    await dialog.getByLabel("Token").fill(RO);
    await dialog.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("heading", { name: "New run" }).waitFor();
    const h100 = page.getByRole("radio", { name: /SM90_H100/ });
    await h100.waitFor();
    assert.equal(await h100.isChecked(), true);
    await page.getByRole("button", { name: "Launch run" }).click();
    await page.getByRole("alert").getByText("Could not launch: this token is read-only: launchRun needs the read-write token (CASCADE_TOKEN)").waitFor();
    await screenshot(page, "42-read-only-launch");
    assert.match(page.url(), /\/new-run$/, "no run page opened");

    // It reads everything else: the traces list, live.
    await page.goto(server.url + "/");
    await page.locator(`tr[data-trace-id="${QS}"] [data-state="READY"]`).waitFor();
    await page.locator('[data-connection="connected"]').waitFor();
    assert.equal(await dialog.count(), 0, "asked again");
    assert.deepEqual(unexpected(errors), []);
    await page.close();
  });

  test("the playground asks for the token and runs a query and a subscription with it", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const q = `{ trace(id: "${QS}") { id state } }`;
    await page.goto(`${server.url}/playground?query=${encodeURIComponent(q)}`);
    const dialog = page.getByRole("dialog", { name: "Access token needed" });
    await dialog.getByLabel("Token").fill(RO);
    await dialog.getByRole("button", { name: "Continue" }).click();
    await dialog.waitFor({ state: "detached" });
    const run = page.locator(".graphiql-execute-button");
    // The editor holds the query before it is run (a fixed wait for the
    // editors to mount ran an empty one on a busy machine).
    const editorHas = (text) =>
      page.waitForFunction((t) => document.querySelector(".graphiql-query-editor")?.textContent?.includes(t), text);
    await run.waitFor();
    await editorHas(QS);
    await run.click();
    const responseHas = (text) => page.waitForFunction((t) => document.querySelector(".graphiql-response")?.textContent?.includes(t), text);
    await responseHas('"READY"');
    await screenshot(page, "43-playground-token");

    const sub = "subscription { traceUpdated(id: null) { id state } }";
    await page.goto(`${server.url}/playground?query=${encodeURIComponent(sub)}`);
    await run.waitFor();
    await editorHas("traceUpdated");
    await run.click();
    const other = "auth-playground";
    const seen = responseHas(`"${other}"`).then(() => true);
    for (const f of traceFiles(other, 3)) {
      await writeTraceFile(server.bucket, other, ...f);
      if (await Promise.race([seen, sleep(700).then(() => false)])) break;
    }
    await seen;
    await page.close();
  });
});
