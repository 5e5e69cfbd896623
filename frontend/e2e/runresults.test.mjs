// End-to-end: a finished run's results are its own. After a restart with another configs
// directory, one without the run's config, its page still shows its comparison and projected
// steps, as before, and says that the config is gone.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim node --test e2e/runresults.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gql, launchBrowser, screenshot, sleep, startServer, upload, watchErrors } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const configs = join(repo, "samples", "sim-configs");
const skip = !process.env.CASCADE_SIM_CMD ? "set CASCADE_SIM_CMD to a simulator (the repository's fakesim will do)" : false;
const QS = "qs-e2e";

const RESULTS = `query($id: ID!) { run(id: $id) { state error simConfig { name error } figures { coreClockMHz }
  comparison { mape simTotalNs } steps { step measuredNs projectedNs } timingProblems } }`;

describe("a finished run's results after its config is gone", { skip }, () => {
  let dirs = [];
  let server;
  let browser;
  before(async () => {
    // The run's configs, and another directory without its config (SM90_H100).
    const mine = await mkdtemp(join(tmpdir(), "cascade-cfgs-"));
    const others = await mkdtemp(join(tmpdir(), "cascade-cfgs-"));
    dirs = [mine, others];
    await cp(configs, mine, { recursive: true });
    await cp(join(configs, "SM7_QV100"), join(others, "SM7_QV100"), { recursive: true });
    assert.ok(existsSync(join(mine, "SM90_H100")));
    server = await startServer({ env: { CASCADE_SIM_CONFIGS_DIR: mine } });
    browser = await launchBrowser();
    await upload(server, join(repo, "samples", "quickstart"), QS);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  test("the run page shows the results it had, and says the config is gone", { timeout: 180_000 }, async () => {
    let ready = false;
    for (const deadline = Date.now() + 30_000; !ready && Date.now() < deadline; await sleep(100)) {
      ready = (await gql(server, `{ trace(id: "${QS}") { state } }`)).trace?.state === "READY";
    }
    assert.ok(ready, "the quickstart trace is ready");
    const { launchRun } = await gql(server, `mutation { launchRun(input: { traceId: "${QS}", simConfig: "SM90_H100" }) { id } }`);
    const id = launchRun.id;
    let before;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
      before = (await gql(server, RESULTS, { id })).run;
      if (before.state === "SUCCEEDED" || before.state === "FAILED") break;
    }
    assert.equal(before.state, "SUCCEEDED", `run: ${JSON.stringify(before)}`);
    assert.ok(before.comparison && before.steps.length > 0, `results before: ${JSON.stringify(before)}`);
    const mape = `${before.comparison.mape.toFixed(1)} %`;

    // The server again, on the same data, with configs that no longer have SM90_H100.
    await server.stop();
    server = await startServer({ dataDir: server.dataDir, env: { CASCADE_SIM_CONFIGS_DIR: dirs[1] } });
    const afterRun = (await gql(server, RESULTS, { id })).run;
    assert.match(afterRun.simConfig.error ?? "", /no longer in CASCADE_SIM_CONFIGS_DIR/);
    assert.deepEqual(afterRun.comparison, before.comparison);
    assert.deepEqual(afterRun.steps, before.steps);

    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/runs/${id}`);
    await page.getByTestId("config-problem").getByText(/SM90_H100: no longer in CASCADE_SIM_CONFIGS_DIR/).waitFor({ timeout: 30_000 });
    await page.getByTestId("config-problem").getByText(/core clock recorded when it ran \(1755 MHz\)/).waitFor();
    assert.equal((await page.getByTestId("mape").locator(".v").innerText()).trim(), mape);
    const table = page.getByRole("table", { name: "Projected step times" });
    await table.waitFor();
    assert.equal(await table.locator("tbody tr").count(), before.steps.length);
    assert.equal(await table.getByText("0.0 %").count(), 0, "no step reads as a perfect prediction");
    assert.equal(await page.getByText("No kernel has been compared yet.").count(), 0);
    await screenshot(page, "26-run-config-gone");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
