// End-to-end for a run page that reads its kernels by pages: a run of the stand-in simulator
// over a generated trace of 600 kernels, held before each kernel's statistics and before each
// launch (FAKESIM_STEP, FAKESIM_STEP_LAUNCH). Its runUpdated
// messages carry no kernel list; its table reads the kernels stored while it runs as its
// progress grows, and once it is over the rest of its pages as the table scrolls.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim node --test e2e/runpage.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gql, launchBrowser, REPO as repo, screenshot, SIM_CONFIGS as configs, simSkip as skip, simStepper, startServer, upload, waitReady, watchErrors } from "./harness.mjs";

const TRACE = "six-hundred";
const KERNELS = 600;

describe("a run page reads its kernels by pages", { skip }, () => {
  let server;
  let browser;
  let sim;
  let dir;
  before(async () => {
    sim = await simStepper();
    server = await startServer({ env: { CASCADE_SIM_CONFIGS_DIR: configs, FAKESIM_STEP: sim.path, FAKESIM_STEP_LAUNCH: "1" } });
    browser = await launchBrowser();
    dir = await mkdtemp(join(tmpdir(), "cascade-e2e-gentrace-"));
    await promisify(execFile)(process.env.CASCADE_BIN, ["gentrace", "-kernels", String(KERNELS), "-insts", "4", join(dir, "traces")]);
    await writeFile(join(dir, "metadata.json"), JSON.stringify({ model: "e2e/Six-Hundred", gpu: "NVIDIA H100 80GB HBM3", trace_gpu_arch: "sm_90" }));
    await upload(server, dir, TRACE);
    await waitReady(server, TRACE);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
    await sim?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("no kernel list in runUpdated; new kernels while it runs; the rest on scroll", { timeout: 180_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    // Every runUpdated message the page receives, as sent.
    const updates = [];
    page.on("websocket", (ws) =>
      ws.on("framereceived", (f) => {
        const m = JSON.parse(String(f.payload));
        if (m.type === "next" && m.payload?.data?.runUpdated) updates.push(String(f.payload));
      }),
    );
    const { launchRun } = await gql(server, "mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }", {
      in: { traceId: TRACE, simConfig: "SM90_H100" },
    });
    await page.goto(`${server.url}/runs/${launchRun.id}`);
    await page.locator('.run-page .toolbar [data-state="RUNNING"]').waitFor({ timeout: 60_000 });
    const count = page.getByTestId("kernel-count");
    const running = page.locator('.run-page .toolbar [data-state="RUNNING"]');

    // A kernel's statistics move the run's progress; its result is stored once the next kernel
    // is launched, a step later: 5 steps print 3 kernels' statistics and store 2. The 6th stores
    // the 3rd, which moves no count: the page reads it on the run's new version all the same
    // (it once waited for the count, and showed a kernel less until the next one ended).
    const progress = page.getByTestId("progress-text");
    for (let i = 0; i < 5; i++) await sim.step();
    await progress.getByText(/^3 of 600 kernels/).waitFor({ timeout: 60_000 });
    await count.getByText(/^2 kernels$/).waitFor({ timeout: 60_000 });
    await sim.step();
    await count.getByText(/^3 kernels$/).waitFor({ timeout: 60_000 });
    assert.match(await progress.innerText(), /^3 of 600 kernels/);
    for (let i = 0; i < 4; i++) await sim.step();
    await count.getByText(/^5 kernels$/).waitFor({ timeout: 60_000 });
    assert.equal(await running.count(), 1, "read while it still runs");
    const table = page.getByRole("table", { name: "Run kernels" });
    assert.equal(await table.locator('.kscroll [role="row"]').count(), 5);

    assert.ok(updates.length > 0, "the page received runUpdated messages");
    const largest = Math.max(...updates.map((u) => Buffer.byteLength(u)));
    console.log(`${updates.length} runUpdated messages, the largest ${largest} bytes`);
    // Progress, totals of the stand-in's counters and figures: a few kB whatever the kernels.
    assert.ok(largest < 16_000, `a runUpdated message of ${largest} bytes`);
    for (const u of updates) {
      const run = JSON.parse(u).payload.data.runUpdated;
      assert.ok("progress" in run && "statTotals" in run, "a runUpdated message carries the run's progress and totals");
      assert.ok(!("kernels" in run) && !("kernelPage" in run) && !("kernelIds" in run), "a runUpdated message carries no kernel list");
      assert.ok(!u.includes('"kernelId"'), `a runUpdated message carries no kernel: ${u.slice(0, 300)}`);
    }

    // The rest at once: the run ends, and the page reads its first page again.
    await appendFile(sim.path, "\n".repeat(2 * KERNELS));
    await page.locator('.run-page .toolbar [data-state="SUCCEEDED"]').waitFor({ timeout: 120_000 });
    await count.getByText(`${KERNELS} kernels, 200 read so far: more as the table scrolls`).waitFor({ timeout: 60_000 });
    await page.getByTestId("cycles-chart").getByText(`then the first 40 of ${KERNELS} kernels`).waitFor();

    // Each scroll to the bottom reads the next page of 200.
    const rows = page.getByRole("rowgroup", { name: "Run kernel rows, scrollable" });
    for (const read of [400, 600]) {
      await rows.evaluate((el) => (el.scrollTop = el.scrollHeight));
      const text = read < KERNELS ? `${KERNELS} kernels, ${read} read so far: more as the table scrolls` : `${KERNELS} kernels`;
      await count.getByText(text, { exact: true }).waitFor({ timeout: 30_000 });
    }
    await rows.evaluate((el) => (el.scrollTop = el.scrollHeight));
    const last = table.locator(`[role="row"][aria-rowindex="${KERNELS + 1}"]`);
    await last.waitFor();
    assert.equal(await last.locator('[role="cell"]').first().innerText(), String(KERNELS));
    assert.equal(await table.getAttribute("aria-rowcount"), String(KERNELS + 1));
    await screenshot(page, "63-run-kernels-by-pages");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
