// End-to-end for a design sweep: New sweep with a parameter axis, and the sweep's design space
// live (cells, speedups against a baseline the user picks, the chart, the CSV).
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim npm run e2e
// Without CASCADE_SIM_CMD (the repository's fakesim will do) these tests are skipped. The
// stand-in simulator scales every kernel's cycles by the config file's -gpgpu_n_clusters (80 on
// SM7_QV100) over the command line's: 20 clusters take 4 times the cycles, 40 twice.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { screenshot, simSkip as skip, startHeld, stopHeld, watchErrors } from "./harness.mjs";


/** Each cell's Speedup column as the design-space table shows it, by its row's config. */
async function speedupsShown(page) {
  return page.getByRole("table", { name: "Design space" }).evaluate((t) =>
    Object.fromEntries([...t.querySelectorAll("tr[data-cell]")].map((tr) => [tr.cells[0].textContent, tr.cells[tr.cells.length - 1].textContent])),
  );
}

// One simulation at a time, each held before every kernel's statistics until the test lets it
// on (FAKESIM_STEP), as in sweeps.test.mjs: what the page shows never depends on the machine's
// speed.
describe("a design sweep against a real server", { skip }, () => {
  let server, browser, sim;
  before(async () => ({ server, browser, sim } = await startHeld({ env: { CASCADE_RUN_CONCURRENCY: "1" }, quickstarts: ["ds-a"] })));
  after(() => stopHeld({ server, browser, sim }));

  test("a sweep over -gpgpu_n_clusters shows each cell's speedup live, against the baseline picked", { timeout: 240_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/sweeps/new`);
    await page.getByRole("checkbox", { name: /ds-a/ }).check({ timeout: 30_000 });
    await page.getByRole("checkbox", { name: /SM7_QV100/ }).check();
    await page.getByRole("button", { name: "Add parameter axis" }).click();
    await page.getByLabel("Axis 1 option").fill("-gpgpu_n_clusters");
    await page.getByLabel("Axis 1 values").fill("20, 40, 80");
    await page.getByTestId("sweep-size").getByText("1 trace × 1 config × 3 -gpgpu_n_clusters values = 3 runs").waitFor();
    await page.getByLabel("Label (optional)").fill("e2e clusters");
    await page.getByTestId("rerun").check();
    await screenshot(page, "70-new-design-sweep");
    await page.getByRole("button", { name: "Launch sweep" }).click();
    await page.waitForURL(/\/sweeps\/(?!new$)[^/]+$/);
    const id = page.url().split("/").pop();
    await page.getByRole("heading", { name: "e2e clusters" }).waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    const table = page.getByRole("table", { name: "Design space" });
    await table.locator("tr[data-cell]").nth(2).waitFor();
    // The baseline is the cell as SM7_QV100 ships (80 clusters), before any run succeeded.
    assert.equal(await page.getByLabel("Baseline").inputValue(), "SM7_QV100 -gpgpu_n_clusters 80");
    assert.deepEqual(await speedupsShown(page), { 20: "—", 40: "—", 80: "baseline" });

    // Run by run (the quickstart has four kernels), the cells fill in as their runs succeed.
    const progress = page.getByTestId("sweep-progress-text");
    for (let done = 1; done <= 3; done++) {
      for (let k = 0; k < 4; k++) await sim.step();
      await progress.getByText(new RegExp(`^${done} of 3 done`)).waitFor({ timeout: 30_000 });
      await page.waitForFunction(
        (n) => [...document.querySelectorAll('table[aria-label="Design space"] tr[data-cell]')].filter((tr) => /^1 of 1/.test(tr.cells[1].textContent)).length === n,
        done,
        { timeout: 30_000 },
      );
    }
    await page.waitForFunction(() => document.querySelector('table[aria-label="Design space"] tr[data-cell] td:last-child')?.textContent === "0.25×", null, { timeout: 30_000 });
    assert.deepEqual(await speedupsShown(page), { 20: "0.25×", 40: "0.50×", 80: "baseline" });
    // The chart: the one axis against time, a point per cell, time falling as clusters grow.
    const chart = page.getByRole("img", { name: "Simulated time against -gpgpu_n_clusters" });
    await chart.waitFor();
    const ys = await chart.locator("circle").evaluateAll((cs) => cs.map((c) => Number(c.getAttribute("cy"))));
    assert.equal(ys.length, 3);
    assert.ok(ys[0] < ys[1] && ys[1] < ys[2], `points' y (down the page) ${ys}: time falls as clusters grow`);
    await page.getByRole("table", { name: "Speedup per kernel name" }).waitFor();
    await screenshot(page, "71-design-space");

    // Another baseline: every speedup is against it.
    await page.getByLabel("Baseline").selectOption("SM7_QV100 -gpgpu_n_clusters 20");
    assert.deepEqual(await speedupsShown(page), { 20: "baseline", 40: "2.00×", 80: "4.00×" });
    const kernelRow = page.getByRole("table", { name: "Speedup per kernel name" }).locator("tbody tr").first();
    assert.deepEqual(await kernelRow.locator("td").evaluateAll((tds) => tds.slice(1).map((td) => td.textContent)), ["baseline", "2.00×", "4.00×"]);

    // The CSV a notebook reads: a row per cell, its axis a column, against the baseline picked.
    const csv = await (await fetch(`${server.url}/sweeps/${id}/design.csv?baseline=${encodeURIComponent("SM7_QV100 -gpgpu_n_clusters 20")}`)).text();
    const [header, ...rows] = csv.trim().split("\n");
    const cols = header.split(",");
    assert.deepEqual(cols.slice(0, 4), ["scope", "config", "base", "gpgpu_n_clusters"]);
    const cells = rows.map((r) => r.split(",")).filter((r) => r[0] === "cell");
    assert.deepEqual(cells.map((r) => [r[3], r[cols.indexOf("speedup")]]), [["20", "1"], ["40", "2"], ["80", "4"]]);
    assert.equal((await fetch(`${server.url}/sweeps/${id}/design.csv?baseline=nope`)).status, 400, "a baseline not among the cells");
    assert.equal((await fetch(`${server.url}/sweeps/no-such-sweep/design.csv`)).status, 404);
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the sweep page reloaded");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
