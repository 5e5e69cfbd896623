// End-to-end for Compare configs: one trace run on two configs with the stand-in simulator,
// the compare page live (both configs' figures, the MAPE chart, the per-kernel errors), a
// failed run on a third config said as "0 of 1 succeeded" and never averaged in, and the
// sweep page's traces × configs grid.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim node --test e2e/compare.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cp, appendFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gql, launchBrowser, screenshot, sleep, startServer, upload, waitReady, watchErrors } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const samples = join(repo, "samples", "sim-configs");
const skip = !process.env.CASCADE_SIM_CMD
  ? "set CASCADE_SIM_CMD to a simulator (the repository's fakesim will do)"
  : !existsSync(samples)
    ? `no sim configs at ${samples}`
    : false;

const TRACE = "cmp-e2e";
const GOOD = ["SM90_H100", "SM86_RTX3070"];
// The stand-in simulator rejects -smem_latency as GPGPU-Sim rejects an unknown option. The
// option goes in after the server's start-up probe took the config (a config refused then is
// refused at launch): runs on it launch, and fail.
const BAD = "SM6_TITANX";

const launch = (server, simConfig) =>
  gql(server, "mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }", { in: { traceId: TRACE, simConfig, rerun: true } });

describe("compare configs against a real server", { skip }, () => {
  let server;
  let browser;
  let configs;
  before(async () => {
    configs = await mkdtemp(join(tmpdir(), "cascade-configs-"));
    await cp(samples, configs, { recursive: true });
    server = await startServer({ env: { CASCADE_SIM_CONFIGS_DIR: configs, CASCADE_RUN_CONCURRENCY: "1" } });
    for (const deadline = Date.now() + 30_000; ; await sleep(200)) {
      const d = await gql(server, "{ simConfigs { name checked } }");
      if (d.simConfigs.every((c) => c.checked)) break;
      if (Date.now() > deadline) throw new Error("the configs were not checked in 30 s");
    }
    await appendFile(join(configs, BAD, "gpgpusim.config"), "\n-smem_latency 10\n");
    browser = await launchBrowser();
    await upload(server, join(repo, "samples", "quickstart"), TRACE);
    await waitReady(server, TRACE);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
    if (configs) await rm(configs, { recursive: true, force: true });
  });

  test("a trace's runs on two configs side by side, live; a failed third config is counted, not averaged", { timeout: 180_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${TRACE}/compare`);
    await page.getByRole("heading", { name: "Compare configs" }).waitFor();
    await page.getByText("This trace has no runs yet.").waitFor();
    await page.evaluate(() => (window.__sameDocument = true));

    // The runs launch with the page open: it follows them (runUpdated), no reload.
    for (const c of GOOD) await launch(server, c);
    const table = page.getByRole("table", { name: "Configs compared" });
    for (const c of GOOD) {
      await page.getByTestId(`counts-${c}`).getByText("1 of 1 succeeded", { exact: true }).waitFor({ timeout: 60_000 });
      await page.getByTestId(`mape-${c}`).getByText(/^\d+(\.\d)? %$/).waitFor();
      await page.getByTestId(`correlation-${c}`).getByText(/^-?[01]\.\d{3}$/).waitFor();
    }
    assert.equal(await table.locator("tr.best").count(), 1, "one config is the best match");
    const chart = page.getByTestId("mape-chart");
    for (const c of GOOD) await chart.locator(`g[data-config="${c}"] rect`).waitFor();
    const kernels = page.getByRole("table", { name: "Kernel errors per config" });
    await kernels.getByRole("columnheader", { name: GOOD[0] }).waitFor();
    await kernels.getByRole("columnheader", { name: GOOD[1] }).waitFor();
    await kernels.getByRole("row").nth(1).getByText(/%$/).first().waitFor();
    // The chart of each kernel's error: a series per config, a mark per kernel.
    const errorChart = page.getByTestId("kernel-error-chart");
    for (const c of GOOD) await errorChart.locator(`g[data-config="${c}"] [data-kernels]`).first().waitFor();
    const marks = await errorChart.locator(`g[data-config="${GOOD[0]}"] [data-kernels]`).count();
    assert.ok(marks >= 2, `${marks} marks for ${GOOD[0]}: want one per kernel`);
    const before = await page.getByTestId(`mape-${GOOD[0]}`).textContent();
    await screenshot(page, "90-compare-configs");

    // A run on a third config fails: shown as 0 of 1 succeeded, with no figures, and the
    // other configs' figures are as they were.
    await launch(server, BAD);
    await page.getByTestId(`counts-${BAD}`).getByText("0 of 1 succeeded (1 failed)", { exact: true }).waitFor({ timeout: 60_000 });
    assert.equal(await page.getByTestId(`mape-${BAD}`).textContent(), "—");
    assert.equal(await page.getByTestId(`mape-${GOOD[0]}`).textContent(), before, "a failed run changed another config's figures");
    await chart.locator(`g[data-config="${BAD}"]`).getByText("no figures: 0 of 1 succeeded").waitFor();
    assert.equal(await chart.locator(`g[data-config="${BAD}"] rect`).count(), 0, "a config without figures has no bar");
    await kernels.getByRole("columnheader", { name: BAD }).waitFor();
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the compare page reloaded");
    await screenshot(page, "91-compare-configs-failed");

    // The trace page links here once the trace has runs on two configs or more.
    await page.goto(`${server.url}/traces/${TRACE}`);
    await page.getByRole("button", { name: "Compare configs (3)" }).click();
    await page.waitForURL(new RegExp(`/traces/${TRACE}/compare$`));
    await page.getByRole("table", { name: "Configs compared" }).waitFor();
    assert.deepEqual(errors, []);
  });

  test("a sweep's page shows traces × configs, a failed cell 0 of 1", { timeout: 180_000 }, async () => {
    const d = await gql(server, "mutation($in: LaunchSweepInput!) { launchSweep(input: $in) { id } }", {
      in: { traceIds: [TRACE], simConfigs: [GOOD[0], BAD], label: "grid e2e", rerun: true },
    });
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/sweeps/${d.launchSweep.id}`);
    const grid = page.getByRole("table", { name: "Traces × configs" });
    const ok = grid.locator(`td[data-cell="${TRACE}|${GOOD[0]}"]`);
    const bad = grid.locator(`td[data-cell="${TRACE}|${BAD}"]`);
    await ok.getByText("1 of 1 succeeded").waitFor({ timeout: 60_000 });
    await ok.getByText(/^MAPE \d+(\.\d)? %/).waitFor();
    await bad.getByText("0 of 1 succeeded").waitFor({ timeout: 60_000 });
    await bad.getByRole("link", { name: "failed" }).waitFor();
    assert.equal(await bad.getByText(/MAPE/).count(), 0, "a failed cell has no figures");
    await screenshot(page, "92-sweep-grid");
    assert.deepEqual(errors, []);
  });

  test("a trace without measured timing compares what the simulator gave, with a CSV", { timeout: 180_000 }, async () => {
    // The quickstart without its timing files: nothing to compare against.
    const dir = await mkdtemp(join(tmpdir(), "cascade-untimed-"));
    await cp(join(repo, "samples", "quickstart", "traces"), join(dir, "traces"), { recursive: true });
    const meta = JSON.parse(await readFile(join(repo, "samples", "quickstart", "metadata.json"), "utf8"));
    delete meta.real_timing;
    await writeFile(join(dir, "metadata.json"), JSON.stringify(meta));
    const id = "cmp-untimed";
    await upload(server, dir, id);
    await waitReady(server, id);
    await rm(dir, { recursive: true, force: true });
    for (const c of GOOD) {
      await gql(server, "mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }", { in: { traceId: id, simConfig: c, rerun: true } });
    }
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${id}/compare`);
    await page.getByText("the configs are compared on what the simulator gave").waitFor();
    const sim = page.getByRole("table", { name: "Simulated figures per config" });
    for (const c of GOOD) {
      await page.getByTestId(`counts-${c}`).getByText("1 of 1 succeeded", { exact: true }).waitFor({ timeout: 60_000 });
      await sim.getByTestId(`sim-cycles-${c}`).getByText(/^[\d,]+$/).waitFor();
      await sim.getByTestId(`sim-time-${c}`).getByText(/s$/).waitFor();
      await sim.getByTestId(`sim-IPC-${c}`).getByText(/^\d/).waitFor();
      // The configs compared show the same simulated total ("—" before: no measured timing).
      const total = await page.getByTestId(`simtotal-${c}`).innerText();
      assert.equal(total, await sim.getByTestId(`sim-time-${c}`).innerText(), `${c}: simulated total`);
    }
    assert.equal(await page.getByTestId("mape-chart").count(), 0, "a MAPE chart without measured times");
    const kernels = page.getByRole("table", { name: "Kernel cycles per config" });
    await kernels.getByRole("row").nth(1).getByText(/^[\d,]+$/).first().waitFor();
    await screenshot(page, "93-compare-untimed");

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
    assert.equal(download.suggestedFilename(), `trace-${id}-configs.csv`);
    const csv = await readFile(await download.path(), "utf8");
    const [header, ...lines] = csv.trim().split("\n");
    assert.match(header, /^scope,kernel_id,context,name,config,run_id,sim_cycles,sim_time_ns,ipc,measured_ns,error_pct,sampled/);
    assert.equal(lines.filter((l) => l.startsWith("run,")).length, GOOD.length, csv);
    assert.ok(lines.filter((l) => l.startsWith("kernel,")).length >= 2 * GOOD.length, csv);
    assert.deepEqual(errors, []);
  });
});
