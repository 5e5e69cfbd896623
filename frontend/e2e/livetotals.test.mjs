// End-to-end for a run's statistics totals while it runs: held by the stand-in simulator
// between kernels (FAKESIM_STEP), a RUNNING run's page shows the totals of the kernels stored
// so far, the sum of the rows it shows, and at its end those of every kernel.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim node --test e2e/livetotals.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { screenshot, simSkip as skip, startHeld, stopHeld, watchErrors } from "./harness.mjs";

const QS = "qs-live-totals";

describe("a running run's statistics totals against a real server", { skip }, () => {
  let server, browser, sim;
  before(async () => ({ server, browser, sim } = await startHeld({ quickstarts: [QS] })));
  after(() => stopHeld({ server, browser, sim }));

  test("the totals row follows the stored kernels while the run runs", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${QS}`);
    await page.locator('.trace-page .toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });
    await page.goto(`${server.url}/traces/${QS}/new-run`);
    await page.getByRole("radio", { name: /SM90_H100/ }).waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "Launch run" }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    await page.locator('.run-page .toolbar [data-state="RUNNING"]').waitFor({ timeout: 60_000 });
    // Kernels 1 and 2 print their statistics; kernel 1's result is final once 2's block
    // starts, and the simulator waits before kernel 3's.
    await sim.step();
    await sim.step();
    // The run's counters are recorded with its first progress.
    await page.getByText(/^Statistics columns/).click({ timeout: 60_000 });
    await page.getByRole("checkbox", { name: /^dram_reads/ }).check();
    const table = page.getByRole("table", { name: "Run kernels" });
    const total = page.getByTestId("stat-totals").locator('[data-stat="dram_reads"]', { hasText: /^[\d,]+$/ });
    await total.waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('.run-page .toolbar [data-state="RUNNING"]').count(), 1, "still running");
    const cells = table.locator('[role="row"]:not(.totals-row) [data-stat="dram_reads"]');
    // The column was just checked: its cells read "—" until the kernels' values of it arrive,
    // which may be after the totals row's (another answer). Sum once every shown cell has one.
    const sum = async () => {
      for (const end = Date.now() + 30_000; ; await page.waitForTimeout(50)) {
        const texts = await cells.allInnerTexts();
        if (texts.length > 0 && texts.every((v) => /^[\d,]+$/.test(v))) {
          return texts.reduce((a, v) => a + Number(v.replaceAll(",", "")), 0);
        }
        assert.ok(Date.now() < end, `kernel cells never all numbers: ${JSON.stringify(texts)}`);
      }
    };
    const number = async () => Number((await total.innerText()).replaceAll(",", ""));
    const running = await number();
    assert.ok(running > 0, `a running total: ${running}`);
    assert.equal(running, await sum(), "the running total is the sum of the kernels shown");
    await screenshot(page, "62-run-live-totals");

    for (let i = 0; i < 2; i++) await sim.step(); // kernels 3 and 4
    await page.locator('.run-page .toolbar [data-state="SUCCEEDED"]').waitFor({ timeout: 60_000 });
    await cells.nth(3).waitFor();
    const final = await number();
    assert.equal(final, await sum(), "the run's total is the kernels' sum");
    assert.ok(final > running, `the total grew: ${running} then ${final}`);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
