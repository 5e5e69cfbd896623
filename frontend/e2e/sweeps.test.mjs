// End-to-end for sweeps: New sweep, the sweep page live (progress, runs, comparison per
// config), the Runs screen's sweeps with their progress, and cancelling a sweep.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim npm run e2e
// Without CASCADE_SIM_CMD (the repository's fakesim will do) these tests are skipped.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { gql, screenshot, simSkip as skip, startHeld, stopHeld, watchErrors } from "./harness.mjs";


/**
 * What the sweep page shows in the first frame whose progress line matches re: that line and
 * each config's Succeeded cell of the comparison (none while it says no run has succeeded).
 */
async function whenProgress(page, re) {
  const shown = await page.waitForFunction(
    (source) => {
      const progress = document.querySelector('[data-testid="sweep-progress-text"]')?.textContent ?? "";
      if (!new RegExp(source).test(progress)) return null;
      const rows = document.querySelectorAll('table[aria-label="Sweep comparison"] tr[data-config]');
      return { progress, succeeded: Object.fromEntries([...rows].map((tr) => [tr.dataset.config, tr.cells[1].textContent])) };
    },
    re.source,
    { timeout: 30_000 },
  );
  return shown.jsonValue();
}

// One simulation at a time, each held before every kernel's statistics until the test lets
// it on (FAKESIM_STEP): what the pages show never depends on the machine's speed. A run's
// steps are given once the run before it is over, since a line written to the pipe while a
// simulator exits would go with it.
describe("sweeps against a real server", { skip }, () => {
  let server, browser, sim;
  before(async () => ({ server, browser, sim } = await startHeld({ env: { CASCADE_RUN_CONCURRENCY: "1" }, quickstarts: ["sw-a", "sw-b"] })));
  after(() => stopHeld({ server, browser, sim }));

  test("New sweep launches traces × configs; the sweep page and the Runs screen follow it live", { timeout: 240_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/runs`);
    await page.getByRole("link", { name: "New sweep" }).click();
    await page.getByRole("heading", { name: "New sweep" }).waitFor();
    await page.getByRole("checkbox", { name: /sw-a/ }).waitFor({ timeout: 30_000 });
    await page.getByRole("checkbox", { name: /sw-b/ }).waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole("button", { name: "Launch sweep" }).isDisabled(), true, "nothing chosen: nothing to launch");
    await page.getByRole("checkbox", { name: /sw-a/ }).check();
    await page.getByRole("checkbox", { name: /sw-b/ }).check();
    await page.getByRole("checkbox", { name: /SM90_H100/ }).check();
    await page.getByRole("checkbox", { name: /SM86_RTX3070/ }).check();
    await page.getByTestId("sweep-size").getByText("2 traces × 2 configs = 4 runs").waitFor();
    await page.getByLabel("Label (optional)").fill("e2e sweep");
    await screenshot(page, "60-new-sweep");
    await page.getByTestId("rerun").check(); // simulate, even where an identical run succeeded
    await page.getByRole("button", { name: "Launch sweep" }).click();
    await page.waitForURL(/\/sweeps\/(?!new$)[^/]+$/);
    const id = page.url().split("/").pop();
    await page.getByRole("heading", { name: "e2e sweep" }).waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    const progress = page.getByTestId("sweep-progress-text");
    await progress.getByText(/^0 of 4 done/).waitFor();
    const runs = page.getByRole("table", { name: "Sweep runs" });
    assert.equal(await runs.locator("tbody tr").count(), 4);
    await page.getByText("No run has succeeded yet.").waitFor();

    // The first run's four kernels: one run over, its config's comparison shows, in the same
    // frame as the progress that counts it (both come with the run's event).
    for (let k = 0; k < 4; k++) await sim.step();
    const first = await whenProgress(page, /^1 of 4 done/);
    assert.deepEqual(Object.values(first.succeeded).sort(), ["0 of 2", "1 of 2"], `shown with "${first.progress}"`);
    await runs.locator('tr[data-state="SUCCEEDED"]').first().waitFor();
    // The first run's config (the lists' order decides which) has a MAPE; the other none yet.
    const comparison = page.getByRole("table", { name: "Sweep comparison" });
    await comparison.getByText(/^\d+(\.\d)? %$/).first().waitFor();
    await screenshot(page, "61-sweep-running");

    // The Runs screen, open beside it, shows the sweep's progress as it goes.
    const list = await browser.context.newPage();
    const listErrors = watchErrors(list);
    await list.goto(`${server.url}/runs`);
    const row = list.getByRole("table", { name: "Sweeps" }).locator(`tr[data-sweep-id="${id}"]`);
    await row.getByText("e2e sweep").waitFor();
    await row.getByText(/^1 of 4 done/).waitFor();
    await list.evaluate(() => (window.__sameDocument = true));

    // Run by run: a step written while a simulator exits would be lost with its pipe.
    for (let done = 2; done <= 4; done++) {
      for (let k = 0; k < 4; k++) await sim.step();
      await progress.getByText(new RegExp(`^${done} of 4 done`)).waitFor({ timeout: 30_000 });
    }
    // The comparison says every run succeeded as soon as the progress does, not a refetch later.
    const last = await whenProgress(page, /^4 of 4 done$/);
    assert.deepEqual(last.succeeded, { SM90_H100: "2 of 2", SM86_RTX3070: "2 of 2" }, `shown with "${last.progress}"`);
    await row.getByText(/^4 of 4 done$/).waitFor({ timeout: 30_000 });
    assert.equal(await row.getAttribute("data-done"), "yes");
    for (const c of ["SM90_H100", "SM86_RTX3070"]) {
      await page.getByTestId(`mape-${c}`).getByText(/^\d+(\.\d)? %$/).waitFor();
      await page.getByTestId(`correlation-${c}`).getByText(/^-?[01]\.\d{3}$/).waitFor();
    }
    assert.equal(await page.getByRole("button", { name: "Cancel sweep" }).count(), 0, "a finished sweep has nothing to cancel");
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the sweep page reloaded");
    assert.equal(await list.evaluate(() => window.__sameDocument), true, "the Runs screen reloaded");
    await screenshot(page, "62-sweep-done");
    await screenshot(list, "63-runs-with-sweep");

    // The Runs screen tells the sweep's runs apart: each is named by the label, its trace and
    // its config, not the sweep's label alone.
    const names = await list
      .getByRole("table", { name: "Runs" })
      .locator("tbody tr[data-run-id]")
      .filter({ has: list.getByRole("link", { name: "e2e sweep", exact: true }) })
      .evaluateAll((trs) => trs.map((tr) => tr.cells[1].querySelector("a").textContent));
    assert.equal(names.length, 4, names.join(" | "));
    assert.equal(new Set(names).size, 4, `the sweep's runs share a name: ${names.join(" | ")}`);
    for (const n of names) assert.match(n, /^e2e sweep · sw-[ab] · (SM90_H100|SM86_RTX3070)$/);

    // A run of the sweep names it, and links back.
    await runs.getByRole("link").first().click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    await page.getByRole("link", { name: "e2e sweep" }).click();
    await page.waitForURL(new RegExp(`/sweeps/${id}$`));
    assert.deepEqual(errors, []);
    assert.deepEqual(listErrors, []);
    await list.close();
    await page.close();
  });

  test("a sweep can be cancelled: its queued runs at once, its running one stopped", { timeout: 180_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/sweeps/new`);
    await page.getByRole("checkbox", { name: "All ready traces" }).check();
    await page.getByRole("checkbox", { name: /SM7_QV100/ }).check();
    await page.getByTestId("sweep-size").getByText("2 traces × 1 config = 2 runs").waitFor();
    await page.getByTestId("rerun").check(); // simulate, even where an identical run succeeded
    await page.getByRole("button", { name: "Launch sweep" }).click();
    await page.waitForURL(/\/sweeps\/(?!new$)[^/]+$/);
    const progress = page.getByTestId("sweep-progress-text");
    // Held before its first kernel's statistics, the first run runs until cancelled.
    await progress.getByText(/1 running/).waitFor({ timeout: 30_000 });
    // One click asks first; "Keep" leaves the sweep as it was.
    const cancel = page.getByRole("button", { name: "Cancel sweep", exact: true });
    await cancel.click();
    const confirm = page.getByRole("group", { name: "Cancel this sweep?" });
    await confirm.getByText(/Its 2 runs not over stop/).waitFor();
    await screenshot(page, "65-sweep-cancel-confirm");
    await confirm.getByRole("button", { name: "Keep the sweep" }).click();
    await confirm.waitFor({ state: "detached" });
    assert.match(await progress.innerText(), /1 running/);
    await cancel.click();
    await confirm.getByRole("button", { name: "Yes, cancel sweep" }).click();
    await progress.getByText(/^2 of 2 done · 2 cancelled$/).waitFor({ timeout: 30_000 });
    // Each sweepUpdated brings one run and the sweep's progress as it is when sent: the
    // line can count a cancellation whose run's own event comes a moment later.
    const cancelled = page.getByRole("table", { name: "Sweep runs" }).locator('tr[data-state="CANCELLED"]');
    await cancelled.nth(1).waitFor({ timeout: 30_000 });
    assert.equal(await cancelled.count(), 2);
    await screenshot(page, "64-sweep-cancelled");
    assert.deepEqual(errors, []);
    await page.close();
  });

  // After the others: it removes one of their traces.
  test("a trace removed: the sweep page and the Runs screen drop its runs without a reload", { timeout: 120_000 }, async () => {
    const { sweeps } = await gql(server, "{ sweeps(first: 10) { nodes { id label } } }");
    const id = sweeps.nodes.find((s) => s.label === "e2e sweep").id;
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/sweeps/${id}`);
    const progress = page.getByTestId("sweep-progress-text");
    await progress.getByText(/^4 of 4 done$/).waitFor();
    const runs = page.getByRole("table", { name: "Sweep runs" }).locator("tbody tr");
    await runs.nth(3).waitFor();
    const list = await browser.context.newPage();
    await list.goto(`${server.url}/runs`);
    const row = list.getByRole("table", { name: "Sweeps" }).locator(`tr[data-sweep-id="${id}"]`);
    await row.getByText(/^4 of 4 done$/).waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    await list.evaluate(() => (window.__sameDocument = true));

    await gql(server, 'mutation { removeTrace(id: "sw-b") }');
    await progress.getByText(/^2 of 2 done$/).waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Sweep runs"] tbody tr').length === 2, null, { timeout: 30_000 });
    assert.deepEqual(
      await page.getByRole("table", { name: "Sweep comparison" }).locator("tr[data-config]").evaluateAll((trs) => trs.map((tr) => tr.cells[1].textContent)),
      ["1 of 1", "1 of 1"],
    );
    await row.getByText(/^2 of 2 done$/).waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the sweep page reloaded");
    assert.equal(await list.evaluate(() => window.__sameDocument), true, "the Runs screen reloaded");
    assert.deepEqual(errors, []);
    await list.close();
    await page.close();
  });
});
