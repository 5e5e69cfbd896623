// End-to-end for what the simulator cannot run: the server asks it, at start, which configs it
// accepts and which binary versions it decodes, and the New run screen offers only what can run.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim node --test e2e/simprobe.test.mjs
// The stand-in simulator refuses -smem_latency (as Accel-Sim's dev branch refuses the shipped
// SM3_KEPLER_TITAN) and, told FAKESIM_BINARY_VERSIONS, decodes only those binary versions.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchBrowser, screenshot, startServer, traceFiles, watchErrors, writeTraceFile } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const skip = !process.env.CASCADE_SIM_CMD ? "set CASCADE_SIM_CMD to a simulator (the repository's fakesim will do)" : false;
const REFUSAL = "the simulator refuses it: GPGPU-Sim ** ERROR: Unknown Option: '-smem_latency'";

describe("configs and traces the simulator cannot run", { skip }, () => {
  let server;
  let browser;
  let configs;
  before(async () => {
    configs = await mkdtemp(join(tmpdir(), "cascade-e2e-configs-"));
    await cp(join(repo, "samples", "sim-configs"), configs, { recursive: true });
    // A Kepler config as Accel-Sim ships it: an option the simulator's dev branch no longer knows.
    const kepler = join(configs, "SM3_KEPLER_TITAN");
    await cp(join(configs, "SM6_TITANX"), kepler, { recursive: true });
    const cfg = join(kepler, "gpgpusim.config");
    await writeFile(cfg, (await readFile(cfg, "utf8")) + "\n-smem_latency 24\n");
    server = await startServer({
      env: { CASCADE_SIM_CONFIGS_DIR: configs, FAKESIM_BINARY_VERSIONS: "35,60,61,70,75,80,86" },
    });
    browser = await launchBrowser();
    for (const [id, arch] of [
      ["h100-trace", "sm_90"],
      ["ampere-trace", "sm_86"],
    ]) {
      for (const [path, text] of traceFiles(id, 2)) {
        await writeTraceFile(server.bucket, id, path, path === "metadata.json" ? text.replace('"sm_90"', `"${arch}"`) : text);
      }
    }
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
    await rm(configs, { recursive: true, force: true });
  });

  test("a refused config is shown with the simulator's reason and cannot be chosen", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/ampere-trace/new-run`);
    await page.getByRole("heading", { name: "New run" }).waitFor({ timeout: 30_000 });
    // Until the simulator has answered the config looks usable; the page asks again once it has.
    const kepler = page.getByRole("radio", { name: /SM3_KEPLER_TITAN/ });
    await page.locator("li", { has: kepler }).getByText(REFUSAL).waitFor({ timeout: 30_000 });
    assert.equal(await kepler.isDisabled(), true, "the refused config cannot be chosen");
    assert.equal(await page.getByRole("radio", { name: /SM86_RTX3070/ }).isChecked(), true);
    assert.equal(await page.getByRole("button", { name: "Launch run" }).isDisabled(), false, "a decodable trace launches");
    assert.equal(await page.getByTestId("cannot-launch").count(), 0);
    await screenshot(page, "70-new-run-refused-config");
    assert.deepEqual(errors, []);
  });

  test("a trace the simulator cannot decode shows why, and Launch is disabled", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/h100-trace/new-run`);
    await page.getByRole("heading", { name: "New run" }).waitFor({ timeout: 30_000 });
    await page
      .getByTestId("cannot-launch")
      .getByText(
        /decodes binary versions 35, 60, 61, 70, 75, 80, 86; this trace is sm_90 \(from metadata\.json\): it needs a simulator that decodes 90 \(Accel-Sim 2\.0\)/,
      )
      .waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole("button", { name: "Launch run" }).isDisabled(), true);
    await screenshot(page, "71-new-run-undecodable-trace");
    assert.deepEqual(errors, []);
  });

  test("the trace page of a trace the simulator cannot decode offers no New run, and says why", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/h100-trace`);
    await page.getByRole("heading", { name: "Runs" }).waitFor({ timeout: 30_000 });
    await page
      .getByTestId("cannot-launch")
      .getByText(/The simulator cannot run this trace: .*it needs a simulator that decodes 90/)
      .waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole("button", { name: "New run" }).count(), 0, "no New run for a trace that cannot run");
    // A decodable trace keeps its New run.
    await page.goto(`${server.url}/traces/ampere-trace`);
    await page.getByRole("button", { name: "New run" }).waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId("cannot-launch").count(), 0);
    assert.deepEqual(errors, []);
  });
});
