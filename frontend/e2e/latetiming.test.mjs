// End-to-end for timing that arrives after a run: the quickstart trace uploaded without its
// measured timing and step timeline, run with the stand-in simulator, its run page open; then
// real_timing.json, corrected_timeline.json and kernel_mapping.json land in the trace's folder
// (the guide: hasStepTimeline can turn true after the trace is ready). The page shows the
// comparison and the steps without a reload: it said there was nothing to compare until one.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim node --test e2e/latetiming.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gql, launchBrowser, REPO as repo, screenshot, SIM_CONFIGS as configs, simSkip as skip, sleep, startServer, upload, waitReady, watchErrors, writeTraceFile } from "./harness.mjs";

const TRACE = "late-timing";
const TIMING = ["real_timing.json", "corrected_timeline.json", "kernel_mapping.json"];

describe("timing uploaded after a run reaches its open page", { skip }, () => {
  let server;
  let browser;
  let dir;
  before(async () => {
    server = await startServer({ env: { CASCADE_SIM_CONFIGS_DIR: configs } });
    browser = await launchBrowser();
    dir = await mkdtemp(join(tmpdir(), "cascade-e2e-late-"));
    const src = join(repo, "samples", "quickstart");
    await cp(join(src, "traces"), join(dir, "traces"), { recursive: true });
    const meta = JSON.parse(await readFile(join(src, "metadata.json"), "utf8"));
    delete meta.real_timing;
    await writeFile(join(dir, "metadata.json"), JSON.stringify(meta));
    await upload(server, dir, TRACE);
    await waitReady(server, TRACE);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("the comparison and the steps appear on the run page, no reload", { timeout: 120_000 }, async () => {
    const d = await gql(server, "mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }", { in: { traceId: TRACE, simConfig: "SM90_H100", rerun: true } });
    const id = d.launchRun.id;
    for (const deadline = Date.now() + 60_000; ; await sleep(200)) {
      const r = await gql(server, "query($id: ID!) { run(id: $id) { state } }", { id });
      if (r.run.state === "SUCCEEDED") break;
      assert.ok(!["FAILED", "CANCELLED"].includes(r.run.state), `run ${r.run.state}`);
      if (Date.now() > deadline) throw new Error(`run still ${r.run.state} after 60 s`);
    }
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/runs/${id}`);
    await page.getByText("The trace has no real timing, so there is nothing to compare with.").waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    const tracePage = await browser.context.newPage();
    await tracePage.goto(`${server.url}/traces/${TRACE}`);
    await tracePage.getByText("not available: no real timing, and no profile with launch durations").waitFor();

    const src = join(repo, "samples", "quickstart");
    for (const f of TIMING) await writeTraceFile(server.bucket, TRACE, f, await readFile(join(src, f), "utf8"));

    // What the API says the page should show, once the scanner has read the files.
    let want;
    for (const deadline = Date.now() + 30_000; ; await sleep(200)) {
      const r = await gql(server, "query($id: ID!) { run(id: $id) { comparison { mape } steps { step } } }", { id });
      if (r.run.comparison && r.run.steps.length > 0) {
        want = r.run;
        break;
      }
      if (Date.now() > deadline) throw new Error(`the API has no comparison and steps 30 s after the files landed: ${JSON.stringify(r.run)}`);
    }
    await page.getByTestId("mape").getByText(/\d %$/).waitFor({ timeout: 15_000 });
    const mape = await page.getByTestId("mape").innerText();
    assert.match(mape, new RegExp(want.comparison.mape.toFixed(1).replace(".", "\\.")), `page MAPE ${mape}, API ${want.comparison.mape}`);
    await page.getByRole("heading", { name: "Projected step times" }).waitFor({ timeout: 15_000 });
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was reloaded");
    await screenshot(page, "late-timing");
    // The trace page, live too, says where the times now come from.
    await tracePage.getByTestId("measured-from").getByText(/real_timing\.json: duration_ns/).waitFor({ timeout: 15_000 });
    assert.deepEqual(errors, []);
  });
});
