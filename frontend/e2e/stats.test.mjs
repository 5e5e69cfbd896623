// End-to-end for a run's simulator statistics: the kernels table's column picker (remembered
// across a reload), "where the cycles went", the run's own figures, and a failed run's failure
// class with its decisive line, and the runs list filtered by it.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim node --test e2e/stats.test.mjs
// CASCADE_SIM_CMD is the simulator: the repository's stand-in prints every counter. Without it
// these tests are skipped.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { launchBrowser, REPO as repo, screenshot, SIM_CONFIGS as configs, simSkip as skip, startServer, upload, watchErrors } from "./harness.mjs";

const QS = "qs-stats";

/** Launches a run of the quickstart under its default config from New run; returns its page. */
async function launchRun(browser, server, label) {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/traces/${QS}`);
  await page.locator('.trace-page .toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });
  await page.goto(`${server.url}/traces/${QS}/new-run`);
  await page.getByRole("radio", { name: /SM90_H100/ }).waitFor({ timeout: 30_000 });
  await page.getByLabel("Label (optional)").fill(label);
  await page.getByTestId("rerun").check(); // simulate, even where an identical run succeeded
  await page.getByRole("button", { name: "Launch run" }).click();
  await page.waitForURL(/\/runs\/[^/]+$/);
  return { page, errors };
}

describe("a run's statistics against a real server", { skip }, () => {
  let ok;
  let failing;
  let browser;
  before(async () => {
    // The stand-in simulator reads FAKESIM_MODE from the server's environment: one server
    // whose runs succeed, one whose runs deadlock.
    [ok, failing] = await Promise.all([
      startServer({ env: { CASCADE_SIM_CONFIGS_DIR: configs, FAKESIM_MODE: "ok" } }),
      startServer({ env: { CASCADE_SIM_CONFIGS_DIR: configs, FAKESIM_MODE: "deadlock" } }),
    ]);
    browser = await launchBrowser();
    await Promise.all([upload(ok, join(repo, "samples", "quickstart"), QS), upload(failing, join(repo, "samples", "quickstart"), QS)]);
  });
  after(async () => {
    await browser?.close();
    await ok?.cleanup();
    await failing?.cleanup();
  });

  test("the column picker shows a counter per kernel, with its unit, and remembers it across a reload", { timeout: 120_000 }, async () => {
    const { page, errors } = await launchRun(browser, ok, "e2e stats");
    await page.locator('.run-page .toolbar [data-state="SUCCEEDED"]').waitFor({ timeout: 60_000 });
    const table = page.getByRole("table", { name: "Run kernels" });
    await table.getByText(/rms_norm/).first().waitFor();
    const header = table.getByRole("columnheader", { name: "dram_reads (requests)" });
    assert.equal(await header.count(), 0, "dram_reads is not shown before it is picked");

    await page.getByText(/^Statistics columns/).click();
    await page.getByRole("checkbox", { name: /^dram_reads/ }).check();
    await header.waitFor();
    // Each of the 4 kernels has a value; the run's total row sums them.
    const cells = table.locator('[role="row"]:not(.totals-row) [data-stat="dram_reads"]');
    await cells.nth(3).waitFor();
    for (const v of await cells.allInnerTexts()) assert.match(v, /^[\d,]+$/, `a kernel's dram_reads: ${v}`);
    const total = await page.getByTestId("stat-totals").locator('[data-stat="dram_reads"]').innerText();
    const sum = (await cells.allInnerTexts()).reduce((a, v) => a + Number(v.replaceAll(",", "")), 0);
    assert.equal(Number(total.replaceAll(",", "")), sum, "the run's total is the kernels' sum");

    await page.reload();
    await page.getByRole("table", { name: "Run kernels" }).getByRole("columnheader", { name: "dram_reads (requests)" }).waitFor();
    assert.equal(
      await page.getByRole("table", { name: "Run kernels" }).locator('[role="row"]:not(.totals-row) [data-stat="dram_reads"]').count(),
      4,
    );

    // Where the cycles went: a bar for the run and each kernel, with segments.
    const chart = page.getByTestId("cycles-chart");
    await chart.locator("rect.seg").first().waitFor();
    assert.equal(await chart.locator("g[data-row]").count(), 5, "the run and its 4 kernels");
    assert.ok((await chart.locator("rect.seg").count()) >= 5);
    await chart.getByRole("radio", { name: "Warp states" }).check();
    await chart.locator('g[data-row="Run"] rect.seg').first().waitFor();

    // The kernels as CSV: a header, then a row per kernel with a column per statistic.
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
    assert.match(download.suggestedFilename(), /^run-[^/]+-kernels\.csv$/);
    const csv = (await readFile(await download.path(), "utf8")).trimEnd().split("\n");
    assert.equal(csv.length, 5, "a header and 4 kernels");
    assert.match(csv[0], /^seq,kernel_id,context,name,launch_uid,sim_cycles,.*,dram_reads,.*,l2_read_hit_rate,/);

    // The run's own figures: the stand-in's build and its simulation rate.
    assert.match(await page.getByTestId("sim-build").innerText(), /Accel-Sim \[build fakesim\]/);
    assert.match(await page.getByTestId("sim-rate").innerText(), /thread insts\/s/);
    assert.equal(await page.getByTestId("failure-class").count(), 0, "a run that succeeded has no failure class");
    await screenshot(page, "60-run-statistics");
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("a failed run shows its failure class and the decisive line; the runs list filters by class", { timeout: 120_000 }, async () => {
    const { page, errors } = await launchRun(browser, failing, "e2e deadlock");
    await page.locator('.run-page .toolbar [data-state="FAILED"]').waitFor({ timeout: 60_000 });
    const failure = page.getByTestId("failure-class");
    await failure.getByText("Deadlock", { exact: true }).waitFor();
    assert.match(await page.getByLabel("Decisive log line").innerText(), /deadlock detected/);
    await screenshot(page, "61-run-failure-class");

    await page.goto(`${failing.url}/runs`);
    const runs = page.getByRole("table", { name: "Runs" });
    await runs.getByText("e2e deadlock").waitFor();
    await page.getByLabel("Filter runs by failure class").selectOption("ASSERTION");
    await page.getByText("No runs match.").waitFor();
    await page.getByLabel("Filter runs by failure class").selectOption("DEADLOCK");
    await runs.getByText("e2e deadlock").waitFor();
    await runs.locator(".failure-class").getByText("Deadlock", { exact: true }).waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  });
});
