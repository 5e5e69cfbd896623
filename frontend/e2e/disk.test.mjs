// End-to-end: the Traces screen shows disk use and warns when the --disk-gib budget is short.
import { after, before, describe, test } from "node:test";
import { launchBrowser, screenshot, startServer, traceFiles, watchErrors, writeTraceFile } from "./harness.mjs";
import assert from "node:assert/strict";

describe("disk budget", () => {
  let server;
  let browser;
  before(async () => {
    // About 10 KiB: one small raw upload, projected at 2.2 times, passes it.
    server = await startServer({ env: { CASCADE_DISK_GIB: "0.00001" } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  test("an upload that will not fit once processed is flagged on the Traces screen", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(server.url + "/");
    await page.getByLabel("Disk usage").waitFor();
    const id = "too-big";
    // Raw kernel traces only: still uploading, so projected at 2.2 times their size.
    for (const f of traceFiles(id, 3).slice(0, 3)) await writeTraceFile(server.bucket, id, ...f);
    await page.getByRole("alert").filter({ hasText: "over the" }).waitFor({ timeout: 15_000 });
    assert.match(await page.getByLabel("Disk usage").innerText(), /budget/);
    await screenshot(page, "40-disk-budget");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
