// End-to-end: the post-processing log, live on the trace page while the post-processor runs.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchBrowser, rawTraceFiles, screenshot, startServer, watchErrors, writeTraceFile } from "./harness.mjs";

const script = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "slow-postprocess.sh");

describe("post-processing, live", () => {
  let server;
  let browser;
  before(async () => {
    server = await startServer({ env: { CASCADE_POSTPROCESS_CMD: script } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  test("the trace page streams the post-processor's log, then shows the kernels", async () => {
    const id = `e2e-raw-${Date.now().toString(36)}`;
    const files = rawTraceFiles(id, 2);
    await writeTraceFile(server.bucket, id, ...files[0]);
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${id}`);
    await page.locator('.trace-page .toolbar [data-state="UPLOADING"]').waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    for (const f of files.slice(1)) await writeTraceFile(server.bucket, id, ...f);

    await page.locator('.trace-page .toolbar [data-state="PROCESSING"]').waitFor();
    const log = page.getByLabel("Post-processing log, live");
    await log.getByText(/step 2 of 6/).waitFor();
    await screenshot(page, "30-trace-processing-log");
    await log.getByText(/step 4 of 6/).waitFor();

    await page.locator('.trace-page .toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });
    await page.getByRole("table", { name: "Kernels" }).getByText("kernel2", { exact: true }).waitFor();
    assert.equal(await page.getByLabel("Post-processing log, live").count(), 0);
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page reloaded");
    await screenshot(page, "31-trace-processed");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
