// End-to-end: the UI stays live when the server drops its subscriptions. The server completes
// a subscription whose client fell too far behind; with CASCADE_SUBSCRIBER_QUEUE=0 it does so
// at every subscription's first change, so the UI must resubscribe and refetch each time.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim npm run e2e
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { launchBrowser, REPO as repo, screenshot, simSkip, sleep, startHeld, startServer, stopHeld, traceFiles, upload, watchErrors, writeTraceFile } from "./harness.mjs";

/** Counts the subscribe messages a page sends over its websockets. */
function countSubscribes(page) {
  const n = { subscribes: 0 };
  page.on("websocket", (ws) =>
    ws.on("framesent", (f) => {
      if (String(f.payload).includes('"type":"subscribe"')) n.subscribes++;
    }),
  );
  return n;
}

describe("subscriptions the server drops come back", () => {
  let server, browser, sim;
  before(async () => ({ server, browser, sim } = await startHeld({ env: { CASCADE_SUBSCRIBER_QUEUE: "0" } })));
  after(() => stopHeld({ server, browser, sim }));

  test("the traces list and a trace page follow an upload to READY", { timeout: 120_000 }, async () => {
    const id = "dropped-live";
    const list = await browser.context.newPage();
    const listErrors = watchErrors(list);
    const listWs = countSubscribes(list);
    await list.goto(server.url + "/");
    await list.locator('tr[data-trace-id="sample"]').waitFor();
    await list.locator('[data-connection="connected"]').waitFor();
    await list.evaluate(() => (window.__sameDocument = true));
    const trace = await browser.context.newPage();
    const traceErrors = watchErrors(trace);
    await trace.goto(`${server.url}/traces/${id}`);
    await trace.getByRole("heading", { name: "Trace not found" }).waitFor();
    const subscribed = listWs.subscribes;

    // The upload, file by file, metadata.json last: every change ends the subscriptions that see it.
    for (const f of traceFiles(id, 3)) await writeTraceFile(server.bucket, id, ...f);

    const row = list.locator(`tr[data-trace-id="${id}"]`);
    await row.locator('[data-state="READY"]').waitFor({ timeout: 30_000 });
    await list.waitForFunction(
      (id) => document.querySelector(`tr[data-trace-id="${id}"] [data-field="kernelCount"]`)?.textContent === "3",
      id,
    );
    assert.ok(listWs.subscribes > subscribed, `the list resubscribed (${subscribed} subscribes, then ${listWs.subscribes})`);
    assert.equal(await list.evaluate(() => window.__sameDocument), true, "the page reloaded");
    await screenshot(list, "40-dropped-list");

    await trace.locator('.trace-page .toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });
    await trace.getByRole("table", { name: "Kernels" }).getByText("kernel3", { exact: true }).waitFor();
    await screenshot(trace, "41-dropped-trace");
    assert.deepEqual(listErrors, []);
    assert.deepEqual(traceErrors, []);
    await list.close();
    await trace.close();
  });

  test("a run page follows its run and its log to the end", { skip: simSkip }, async () => {
    const qs = "qs-dropped";
    await upload(server, join(repo, "samples", "quickstart"), qs);
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${qs}/new-run`);
    await page.getByRole("button", { name: "Launch run" }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    const log = page.getByLabel("Simulator log, live");
    for (let k = 1; k <= 4; k++) {
      // Held before kernel k's statistics: the page shows the kernels before it done.
      await log.getByText(new RegExp(`uid: ${k} `)).waitFor({ timeout: 30_000 });
      await page.getByTestId("progress-text").getByText(new RegExp(`^${k - 1} of 4 kernels`)).waitFor({ timeout: 30_000 });
      if (k === 3) {
        // The log came as one stream: no line twice, though its nudges were dropped.
        const lines = (await log.innerText()).split("\n").filter((l) => l.startsWith("launching kernel name"));
        assert.deepEqual(lines.map((l) => l.match(/uid: (\d+)/)[1]), ["1", "2", "3"]);
        await screenshot(page, "42-dropped-run");
      }
      await sim.step();
    }
    await page.locator('.run-page .toolbar [data-state="SUCCEEDED"]').waitFor({ timeout: 30_000 });
    await page.getByTestId("progress-text").getByText("4 of 4 kernels").waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe("pages opened before what they show exists", () => {
  let server;
  let browser;
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  test("a trace page opened before the upload fills in, kernels and all", { timeout: 120_000 }, async () => {
    const id = "not-yet";
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${id}`);
    await page.getByRole("heading", { name: "Trace not found" }).waitFor();
    await page.locator('[data-connection="connected"]').waitFor();
    for (const f of traceFiles(id, 3)) await writeTraceFile(server.bucket, id, ...f);
    await page.locator('.trace-page .toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });
    await page.getByRole("table", { name: "Kernels" }).getByText("kernel3", { exact: true }).waitFor();
    await page.getByText("3 of 3 kernels loaded").waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("New run and New sweep follow a trace to READY without a reload", { timeout: 120_000 }, async () => {
    const id = "ready-later";
    const files = traceFiles(id, 2);
    await writeTraceFile(server.bucket, id, ...files[0]); // its first file: uploading
    const run = await browser.context.newPage();
    const sweep = await browser.context.newPage();
    const errors = [...[run, sweep].map(watchErrors)];
    await run.goto(`${server.url}/traces/${id}/new-run`);
    await run.getByTestId("cannot-launch").getByText("Runs launch from ready traces; this one is uploading.").waitFor();
    await sweep.goto(`${server.url}/sweeps/new`);
    await sweep.getByRole("heading", { name: "New sweep" }).waitFor();
    for (const p of [run, sweep]) {
      await p.locator('[data-connection="connected"]').waitFor();
      await p.evaluate(() => (window.__sameDocument = true));
    }
    const listed = sweep.locator("label", { hasText: id });
    assert.equal(await listed.count(), 0, "listed before it is ready");
    // Past the one re-run of every query a second after subscribing (SETTLE_MS), which would
    // show a trace ready by then whether or not the pages follow it.
    await sleep(2_500);

    for (const f of files.slice(1)) await writeTraceFile(server.bucket, id, ...f);
    await run.locator('.toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });
    await run.getByTestId("cannot-launch").waitFor({ state: "detached" });
    await listed.waitFor({ timeout: 30_000 });
    for (const p of [run, sweep]) assert.equal(await p.evaluate(() => window.__sameDocument), true, "the page reloaded");
    await screenshot(run, "44-new-run-ready-later");
    assert.deepEqual(errors.flat(), []);
    await run.close();
    await sweep.close();
  });
});
