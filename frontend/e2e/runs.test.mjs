// End-to-end for runs: New run, the run page live, cancel, and the sample trace refusing to run.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim npm run e2e
// CASCADE_SIM_CMD is the simulator: Accel-Sim's accel-sim.out, or the repository's stand-in
// (go build -o /tmp/fakesim ./testkit/fakesim/cmd/fakesim). Without it these tests are skipped.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { gql, REPO as repo, screenshot, simSkip as skip, startHeld, stopHeld, upload, watchErrors } from "./harness.mjs";

const QS = "qs-e2e";

// Nothing here depends on the stand-in simulator's speed or the machine's load: every run is
// held before each kernel's statistics until the test lets it on (FAKESIM_STEP), and each test
// launches the runs it looks at.
describe("runs against a real server", { skip }, () => {
  let server, browser, sim;
  before(async () => {
    // Two at once: a run a failed test left held never queues the next test's run. The
    // quickstart trace, uploaded as the README says: ready on upload, with real timing and a
    // step timeline.
    ({ server, browser, sim } = await startHeld({ env: { CASCADE_RUN_CONCURRENCY: "2" }, quickstarts: [QS] }));
  });
  after(() => stopHeld({ server, browser, sim }));

  test("New run preselects the default config, launches, and the run page follows it live", { timeout: 180_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${QS}`);
    await page.locator('.trace-page .toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "New run" }).click();
    await page.getByRole("heading", { name: "New run" }).waitFor();
    const h100 = page.getByRole("radio", { name: /SM90_H100/ });
    await h100.waitFor();
    assert.equal(await h100.isChecked(), true, "the suggested, compatible config is preselected");
    // Configs of other architectures can be chosen; the page says what they mean.
    assert.equal(await page.getByRole("radio", { name: /SM7_QV100/ }).isDisabled(), false);
    await page.getByTestId("cross-arch-SM7_QV100").getByText(/other architecture: simulates the sm_90 \(9\.0\) trace on compute capability 7\.0/).waitFor();
    assert.equal(await page.getByTestId("cross-arch-SM90_H100").count(), 0);
    assert.equal(await page.getByTestId("cross-arch-choice").count(), 0, "the compatible default is no cross-architecture run");
    await page.getByLabel("Label (optional)").fill("e2e quickstart");
    await screenshot(page, "20-new-run");

    await page.getByTestId("rerun").check(); // simulate, even where an identical run succeeded

    await page.getByRole("button", { name: "Launch run" }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    const runId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop());
    await page.getByRole("heading", { name: "e2e quickstart" }).waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    // Held before kernel 1's statistics: running, its log live, no kernel done.
    await page.locator('.run-page .toolbar [data-state="RUNNING"]').waitFor({ timeout: 30_000 });
    await page.getByLabel("Simulator log, live").getByText(/launching kernel name: .* uid: 1 /).waitFor({ timeout: 30_000 });
    await page.getByTestId("progress-text").getByText(/^0 of 4 kernels/).waitFor();
    await sim.step();
    await page.getByTestId("progress-text").getByText(/^1 of 4 kernels/).waitFor({ timeout: 30_000 });
    await page.getByLabel("Simulator log, live").getByText(/uid: 2 /).waitFor({ timeout: 30_000 });
    await screenshot(page, "21-run-running");

    for (let k = 2; k <= 4; k++) await sim.step();
    await page.locator('.run-page .toolbar [data-state="SUCCEEDED"]').waitFor({ timeout: 30_000 });
    await page.getByTestId("progress-text").getByText("4 of 4 kernels").waitFor();
    await page.getByTestId("mape").waitFor();
    await page.locator(".chart canvas").waitFor();
    await page.getByRole("table", { name: "Run kernels" }).getByText(/rms_norm/).first().waitFor();
    await page.getByRole("table", { name: "Projected step times" }).waitFor();
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page reloaded");
    // The simulator counts thread instructions (gpu_sim_insn), the trace warp instructions: the
    // columns say which.
    const runKernels = page.getByRole("table", { name: "Run kernels" });
    await runKernels.getByRole("columnheader", { name: "Instructions (thread)" }).waitFor();
    await runKernels.getByRole("columnheader", { name: "IPC (thread)" }).waitFor();

    // Hovering a point names its kernel.
    const box = await page.locator(".chart .u-over").boundingBox();
    for (let x = 0; x < box.width; x += 6) {
      await page.mouse.move(box.x + x, box.y + box.height / 2);
      if (await page.getByRole("tooltip").count()) break;
    }
    await page.getByRole("tooltip").waitFor();
    // It names the kernel as the tables do, not by its mangled name.
    assert.doesNotMatch(await page.getByRole("tooltip").innerText(), /_Z\w+/);
    await screenshot(page, "22-run-succeeded");

    // The trace page lists the run, with its total cycles (its kernels') and wall time.
    await page.goto(`${server.url}/traces/${QS}`);
    await page.getByRole("table", { name: "Runs" }).getByText("e2e quickstart").waitFor();
    const { run } = await gql(server, "query($id: ID!) { run(id: $id) { kernels { simCycles } } }", { id: runId });
    const total = run.kernels.reduce((n, k) => n + k.simCycles, 0);
    assert.ok(total > 0);
    const row = page.locator(`tr[data-run-id="${runId}"]`);
    assert.equal(await row.getByTestId("run-cycles").innerText(), total.toLocaleString("en-US"));
    assert.equal(await row.getByTestId("sampled-run").count(), 0);
    const headers = await page.getByRole("table", { name: "Runs" }).getByRole("columnheader").allTextContents();
    assert.ok(headers.includes("Wall time"), headers.join());
    const wall = await row.locator("td").nth(headers.indexOf("Wall time")).innerText();
    assert.match(wall, /^\d+ (ms|s)$|^\d+ min \d+ s$/);
    await page.getByRole("table", { name: "Kernels" }).getByRole("columnheader", { name: "Instructions (warp)" }).waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("a cross-architecture run: New run and the run page say so, and the config's side files are found", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${QS}/new-run`);
    // SM6_TITANX's gpgpusim.config names config_pascal_islip.icnt, which the simulator opens
    // from its run directory.
    await page.getByRole("radio", { name: /SM6_TITANX/ }).check();
    await page.getByTestId("cross-arch-choice").getByText(/the trace was taken on sm_90; SM6_TITANX simulates it as compute capability 6\.1/).waitFor();
    await page.getByLabel("Label (optional)").fill("e2e pascal");
    await screenshot(page, "26-new-run-cross-arch");
    await page.getByTestId("rerun").check(); // simulate, even where an identical run succeeded
    await page.getByRole("button", { name: "Launch run" }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    await page.getByRole("heading", { name: "e2e pascal" }).waitFor();
    await page.getByTestId("cross-arch").getByText(/the trace was taken on sm_90 \(NVIDIA H100 80GB HBM3\); this run simulates it on SM6_TITANX, compute capability 6\.1/).waitFor();
    for (let k = 1; k <= 4; k++) await sim.step();
    await page.locator('.run-page .toolbar [data-state="SUCCEEDED"]').waitFor({ timeout: 60_000 });
    await screenshot(page, "27-run-cross-arch");
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("kernel names read demangled, keep the mangled one on hover and to copy, and search matches both", async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.goto(`${server.url}/traces/${QS}`);
    const table = page.getByRole("table", { name: "Kernels" });
    const rms = table.getByText("vllm::rms_norm_kernel<c10::BFloat16>", { exact: true });
    await rms.waitFor();
    const mangled = "_ZN4vllm15rms_norm_kernelIN3c108BFloat16EEEvPT_PKS3_S6_fii";
    assert.match(await rms.getAttribute("title"), new RegExp(`^${mangled}\n`));
    assert.equal(await table.getByText(mangled, { exact: true }).count(), 0, "the mangled name is not what the table shows");
    // The copy button shows an icon whatever fonts the machine has (no glyph to miss).
    const copy = table.getByRole("button", { name: `Copy mangled name ${mangled}` });
    const visible = async (what) => {
      const b = await copy.locator("svg:visible path").first().boundingBox({ timeout: 5_000 });
      assert.ok(b && b.width > 2 && b.height > 2, `the copy button's ${what} icon is drawn: ${JSON.stringify(b)}`);
    };
    await visible("copy");
    await copy.click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), mangled);
    // It says "copied" for a moment, then shows its icon again.
    await copy.locator('[data-icon="copy"]').waitFor();
    await visible("copy");

    const search = page.getByLabel("Search kernels by name, mangled or demangled");
    const rows = table.getByRole("rowgroup", { name: "Kernel rows, scrollable" }).getByRole("row");
    // A demangled name only: "vllm::act" is not in any mangled name.
    await search.fill("vllm::act");
    await page.getByText("1 of 1 matching kernels loaded").waitFor();
    assert.equal(await rows.count(), 1);
    await table.getByText("vllm::act_and_mul_kernel<c10::BFloat16>", { exact: true }).waitFor();
    // A mangled name only: "19residual" is not in any demangled one.
    await search.fill("19residual");
    await table.getByText("residual_add_kernel", { exact: true }).waitFor();
    assert.equal(await rows.count(), 1);
    await search.fill("no such kernel");
    await page.getByText("No kernel name holds “no such kernel”.").waitFor();
    await search.fill("");
    await page.getByText("4 of 4 kernels loaded").waitFor();
    await screenshot(page, "28-kernel-names");
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("a running run can be cancelled", { timeout: 180_000 }, async () => {
    const page = await browser.context.newPage();
    await page.goto(`${server.url}/traces/${QS}/new-run`);
    await page.getByLabel("Label (optional)").fill("e2e cancel");
    await page.getByTestId("rerun").check(); // simulate, even where an identical run succeeded
    await page.getByRole("button", { name: "Launch run" }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    const id = page.url().split("/").pop();
    // Held before its first kernel's statistics, it runs until cancelled.
    await page.locator('.run-page .toolbar [data-state="RUNNING"]').waitFor({ timeout: 30_000 });
    // One click asks first; "Keep running" leaves the run alone.
    const cancel = page.getByRole("button", { name: "Cancel run", exact: true });
    await cancel.click();
    const confirm = page.getByRole("group", { name: "Cancel this run?" });
    await confirm.waitFor({ timeout: 5_000 });
    const keep = confirm.getByRole("button", { name: "Keep running" });
    assert.equal(await keep.evaluate((b) => b === document.activeElement), true, "the harmless choice has the focus");
    await screenshot(page, "30-run-cancel-confirm");
    await keep.click();
    await confirm.waitFor({ state: "detached" });
    // Escape leaves it too.
    await cancel.click();
    await confirm.waitFor();
    await page.keyboard.press("Escape");
    await confirm.waitFor({ state: "detached" });
    assert.equal(await page.locator('.run-page .toolbar [data-state="RUNNING"]').count(), 1, "still running");
    await cancel.click();
    await confirm.getByRole("button", { name: "Yes, cancel run" }).click();
    await page.locator('.run-page .toolbar [data-state="CANCELLED"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole("button", { name: "Cancel run" }).count(), 0);
    await screenshot(page, "23-run-cancelled");
    await page.goto(`${server.url}/runs`);
    await page.locator(`tr[data-run-id="${id}"][data-state="CANCELLED"]`).waitFor();
    await screenshot(page, "24-runs");
    await page.close();
  });

  test("a trace's directory removed while its run runs: the run page and the Runs list say so, without a reload", { timeout: 180_000 }, async () => {
    const gone = `${QS}-removed`;
    await upload(server, join(repo, "samples", "quickstart"), gone);
    const list = await browser.context.newPage();
    const errors = watchErrors(list);
    await list.goto(`${server.url}/runs`);
    const page = await browser.context.newPage();
    await page.goto(`${server.url}/traces/${gone}/new-run`);
    await page.getByLabel("Label (optional)").fill("e2e removed");
    await page.getByTestId("rerun").check(); // simulate, even where an identical run succeeded
    await page.getByRole("button", { name: "Launch run" }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    const id = page.url().split("/").pop();
    // Held before its first kernel's statistics, it runs until its trace goes.
    await page.locator('.run-page .toolbar [data-state="RUNNING"]').waitFor({ timeout: 30_000 });
    await list.locator(`tr[data-run-id="${id}"]`).waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    await list.evaluate(() => (window.__sameDocument = true));
    await rm(join(server.bucket, gone), { recursive: true, force: true });
    await page.getByTestId("run-removed").getByText(gone).waitFor({ timeout: 30_000 });
    await list.locator(`tr[data-run-id="${id}"]`).waitFor({ state: "detached", timeout: 30_000 });
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the run page reloaded");
    assert.equal(await list.evaluate(() => window.__sameDocument), true, "the Runs list reloaded");
    await screenshot(page, "29-run-removed");
    assert.deepEqual(errors, []);
    await page.close();
    await list.close();
  });

  test("the sample trace cannot launch, and the page says why", async () => {
    const page = await browser.context.newPage();
    await page.goto(`${server.url}/traces/sample/new-run`);
    await page.getByTestId("cannot-launch").getByText(/sample trace/).waitFor();
    assert.equal(await page.getByRole("button", { name: "Launch run" }).isDisabled(), true);
    await screenshot(page, "25-sample-cannot-launch");
    await page.close();
  });
});
