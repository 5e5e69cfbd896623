// End-to-end for the Slurm executor: the run page shows a run's job (id, state, partition,
// node), and a banner says when Slurm stops answering and goes when it answers again.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim npm run e2e -- e2e/slurm.test.mjs
// A one-node cluster is started with scripts/slurm.sh (which installs Slurm's Debian packages
// when missing) and stopped after. Skipped, saying why, without CASCADE_SIM_CMD or where the
// packages cannot be installed.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { launchBrowser, screenshot, simStepper, startServer, upload, watchErrors } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const slurmSh = join(repo, "scripts", "slurm.sh");
const configs = process.env.CASCADE_SIM_CONFIGS_DIR ?? join(repo, "samples", "sim-configs");
const run = promisify(execFile);
const QS = "qs-slurm";

/** Starts the cluster; returns its environment, or why it cannot (exit 3: no packages). */
async function clusterUp(dir) {
  try {
    const { stdout } = await run(slurmSh, ["up", dir, "--no-accounting"], { maxBuffer: 1 << 20 });
    const env = {};
    for (const line of stdout.split("\n")) {
      const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
      if (m) env[m[1]] = m[2];
    }
    return { env };
  } catch (e) {
    if (e.code === 3) return { skip: `SKIPPED: Slurm cannot be installed on this machine: ${e.stderr}` };
    throw new Error(`scripts/slurm.sh up: ${e.message}\n${e.stderr}`);
  }
}

async function gql(server, query) {
  const r = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query }),
  });
  const body = await r.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

describe("the Slurm executor in the web UI", { skip: !process.env.CASCADE_SIM_CMD && "set CASCADE_SIM_CMD to a simulator (the repository's fakesim will do)" }, () => {
  let dir;
  let cluster;
  let server;
  let browser;
  let sim;
  before(async (t) => {
    dir = await mkdtemp(join(tmpdir(), "cascade-e2e-slurm-"));
    cluster = await clusterUp(dir);
    if (cluster.skip) {
      console.error(cluster.skip);
      return;
    }
    sim = await simStepper();
    server = await startServer({
      env: {
        CASCADE_EXECUTOR: "slurm",
        SLURM_CONF: cluster.env.SLURM_CONF,
        CASCADE_SLURM_POLL_INTERVAL: "300ms",
        CASCADE_SLURM_TIMEOUT: "3s",
        CASCADE_SLURM_PARTITION: "long",
        CASCADE_SIM_CONFIGS_DIR: configs,
        FAKESIM_STEP: sim.path,
      },
    });
    browser = await launchBrowser();
    await upload(server, join(repo, "samples", "quickstart"), QS);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
    await sim?.close();
    if (dir && existsSync(join(dir, "slurm.conf"))) await run(slurmSh, ["down", dir]).catch((e) => console.error(e.stderr));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("the run page shows the job, and the banner the controller's outage", { timeout: 300_000 }, async (t) => {
    if (cluster.skip) return t.skip(cluster.skip);
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${QS}`);
    await page.locator('.trace-page .toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });
    const { launchRun } = await gql(server, `mutation { launchRun(input: {traceId: "${QS}", simConfig: "SM90_H100", label: "on slurm"}) { id } }`);
    await page.goto(`${server.url}/runs/${launchRun.id}`);
    await page.getByRole("heading", { name: "on slurm" }).waitFor();
    // Held before kernel 1's statistics: the job runs on the cluster's one node.
    await page.locator('.run-page .toolbar [data-state="RUNNING"]').waitFor({ timeout: 60_000 });
    await page.getByTestId("slurm-job").getByText(/^\d+ RUNNING$/).waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId("slurm-partition").textContent(), "long");
    assert.equal(await page.getByTestId("slurm-node").textContent(), cluster.env.CASCADE_SLURM_NODE);
    assert.equal(await page.getByTestId("executor-banner").count(), 0, "no banner while Slurm answers");
    await sim.step();
    await page.getByTestId("progress-text").getByText(/^1 of 4 kernels/).waitFor({ timeout: 30_000 });
    await screenshot(page, "60-run-slurm-running");

    await run(slurmSh, ["stop-ctld", dir]);
    try {
      const banner = page.getByTestId("executor-banner");
      await banner.getByText(/Slurm is unavailable\. Slurm has not answered since/).waitFor({ timeout: 60_000 });
      // The run keeps its state, and its log is still followed.
      await sim.step();
      await page.getByTestId("progress-text").getByText(/^2 of 4 kernels/).waitFor({ timeout: 30_000 });
      assert.equal(await page.locator('.run-page .toolbar [data-state="RUNNING"]').count(), 1);
      await screenshot(page, "61-slurm-unavailable");
    } finally {
      await run(slurmSh, ["start-ctld", dir]);
    }
    await page.getByTestId("executor-banner").waitFor({ state: "detached", timeout: 60_000 });
    await sim.step();
    await sim.step();
    await page.locator('.run-page .toolbar [data-state="SUCCEEDED"]').waitFor({ timeout: 60_000 });
    await page.getByTestId("slurm-job").getByText(/^\d+ COMPLETED$/).waitFor({ timeout: 30_000 });
    await screenshot(page, "62-run-slurm-succeeded");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
