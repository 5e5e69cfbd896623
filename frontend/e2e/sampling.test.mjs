// End-to-end for sampled simulation from the web UI: a 48-launch trace with real timing (the
// quickstart's four kernels as twelve layers, prefill launches five times the decode ones'
// duration) planned from its sampling page (the form's errors, the plan's figures, strata table
// and chart), then a sampled run launched with validate, followed live to SUCCEEDED with its
// projected total and its check against the full run, without a reload; Compare configs marks
// a sampled run that stands for its config, until a full run of the config succeeds.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim node --test e2e/sampling.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gql, launchBrowser, screenshot, startServer, upload, waitReady, watchErrors } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const samples = join(repo, "samples", "sim-configs");
const quickstart = join(repo, "samples", "quickstart", "traces");
const skip = !process.env.CASCADE_SIM_CMD
  ? "set CASCADE_SIM_CMD to a simulator (the repository's fakesim will do)"
  : !existsSync(samples)
    ? `no sim configs at ${samples}`
    : false;

const TRACE = "sampling-e2e";
const LAYERS = 12;
const PREFILL = 4; // the first layers are prefill: five times longer
const CTX = "0x55d2c3a1e4f0";
// The config of the sampled run checked against a full run launched later, apart from the
// validate test's (SM90_H100), whose validation run would otherwise be that full run.
const OTHER = "SM86_RTX3070";

/**
 * Writes a ready-on-upload trace of LAYERS × 4 launches into dir: the quickstart's kernels
 * (their .traceg bodies, with the launch's kernel id), its stats and kernel lists, and
 * real_timing.json with a measured duration per launch that varies by a few percent within a
 * layer kind.
 */
async function writeSamplingTrace(dir) {
  const files = (await readdir(quickstart)).filter((f) => f.endsWith(".traceg")).sort();
  const kernels = await Promise.all(files.map((f) => readFile(join(quickstart, f), "utf8")));
  const statsLines = (await readFile(join(quickstart, `stats_ctx_${CTX}`), "utf8")).trim().split("\n");
  const header = statsLines[0];
  const stats = statsLines.slice(1).map((l) => l.split(",").map((s) => s.trim()));
  const base = [3100, 9800, 2400, 1700];
  await mkdir(join(dir, "traces"), { recursive: true });
  const listG = ["MemcpyHtoD,0x00007f1c2e000000,8192"];
  const listRaw = ["MemcpyHtoD,0x00007f1c2e000000,8192"];
  const statRows = [header];
  const timing = [];
  let id = 0;
  for (let layer = 0; layer < LAYERS; layer++) {
    for (let k = 0; k < kernels.length; k++) {
      id++;
      const name = `kernel-${id}-ctx_${CTX}`;
      await writeFile(join(dir, "traces", `${name}.traceg`), kernels[k].replace(/^-kernel id = \d+$/m, `-kernel id = ${id}`));
      listG.push(`${name}.traceg`);
      listRaw.push(`${name}.trace`);
      statRows.push([`${name}.trace`, ...stats[k].slice(1)].join(", "));
      const scale = layer < PREFILL ? 5 : 1;
      timing.push({
        kernel_id: id,
        context: CTX,
        kernel_name: stats[k][1],
        invocation: layer,
        duration_ns: Math.round(base[k] * scale * (1 + 0.02 * Math.sin(id))),
      });
    }
  }
  await writeFile(join(dir, "traces", "kernelslist.g"), listG.join("\n") + "\n");
  await writeFile(join(dir, "traces", `kernelslist_ctx_${CTX}`), listRaw.join("\n") + "\n");
  await writeFile(join(dir, "traces", `stats_ctx_${CTX}`), statRows.join("\n") + "\n");
  await writeFile(join(dir, "real_timing.json"), JSON.stringify(timing, null, 1) + "\n");
  const meta = {
    run_name: TRACE,
    model: "e2e/Sampled-Model",
    layers: Array.from({ length: LAYERS }, (_, i) => i),
    gpu: "NVIDIA H100 80GB HBM3",
    trace_gpu_arch: "sm_90",
    suggested_sim_config: "SM90_H100",
    real_timing: "real_timing.json",
  };
  await writeFile(join(dir, "metadata.json"), JSON.stringify(meta, null, 2) + "\n");
  return id;
}

describe("sampled simulation from the web UI", { skip }, () => {
  let server;
  let browser;
  let src;
  let launches;
  before(async () => {
    src = await mkdtemp(join(tmpdir(), "cascade-sampling-"));
    launches = await writeSamplingTrace(src);
    server = await startServer({ env: { CASCADE_SIM_CONFIGS_DIR: samples, CASCADE_RUN_CONCURRENCY: "2" } });
    browser = await launchBrowser();
    await upload(server, src, TRACE);
    await waitReady(server, TRACE);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
    if (src) await rm(src, { recursive: true, force: true });
  });

  test("plan a trace from its sampling page: errors by field, figures, strata table and chart", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${TRACE}`);
    await page.getByRole("button", { name: "Sample" }).click();
    await page.waitForURL(/\/traces\/sampling-e2e\/sample$/);
    await page.getByRole("heading", { name: "Sampled simulation" }).waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    await page.getByText("This trace has no plan yet.").waitFor();
    // The default method is said, with why.
    await page.getByLabel(/Server's default: STEM/).waitFor();

    // A bound the form refuses itself, then one the server refuses: each under its field.
    const bound = page.getByLabel("Error bound in percent");
    await bound.fill("150");
    await page.getByTestId("target-hint").getByText(/below 100 %/).waitFor();
    assert.equal(await page.getByRole("button", { name: "Plan", exact: true }).isDisabled(), true);
    await bound.fill("10");
    // The server's default warm-up, a step, is the form's: a count of launches needs the box unchecked.
    const step = page.getByRole("checkbox", { name: /One step of the program \(the default\)/ });
    assert.equal(await step.isChecked(), true, "the form's default warm-up is the server's, a step");
    assert.equal(await page.getByLabel("Warm-up launches").isDisabled(), true);
    await step.uncheck();
    await page.getByLabel("Warm-up launches").fill("99");
    await page.getByRole("button", { name: "Plan", exact: true }).click();
    await page.getByTestId("warmup-hint").getByText(/must be 0 to 64 launches, got 99/).waitFor();
    assert.equal(await page.getByTestId("plan-error").count(), 0, "a field's error is shown at the field");

    await page.getByLabel("Warm-up launches").fill("1");
    await page.getByRole("button", { name: "Plan", exact: true }).click();
    await page.waitForURL(/\?plan=/);
    const view = page.getByTestId("plan-view");
    await view.waitFor();
    await page.getByRole("table", { name: "Sampling plans, newest first" }).getByTestId("plan-row").first().waitFor();
    assert.equal(await page.getByTestId("plan-row").count(), 1);
    await view.getByRole("heading", { name: /Plan .*: STEM, ±10\.0 %/ }).waitFor();
    await page.getByTestId("plan-sim-launches").getByText(`Launches simulated, of ${launches}`).waitFor();
    const samplesText = await page.getByTestId("plan-samples").locator(".v").innerText();
    const nSamples = Number(samplesText.replace(/,/g, ""));
    assert.ok(nSamples >= 8 && nSamples < launches, `representatives: ${samplesText}`);

    // Strata: each kernel's prefill and decode launches apart (the durations' two clusters).
    const strata = page.getByRole("table", { name: "Strata" });
    await strata.getByText("vllm::rms_norm_kernel<c10::BFloat16>").first().waitFor();
    // At least a stratum a kernel; a kernel's prefill and decode launches apart only where that
    // plan simulates fewer warp instructions (the least-cost allocation).
    const nStrata = await strata.getByTestId("stratum").count();
    assert.ok(nStrata >= 4, `${nStrata} strata: fewer than the 4 kernels`);
    assert.equal(await strata.getByTestId("representative").count(), nSamples);
    // Each stratum says why it has its representatives (the enum's meaning as a tooltip), what
    // it costs in warp instructions and its share of the projection's variance; the shares add
    // up to 100 %.
    for (const h of ["Why", "Cost", "Variance share"]) await strata.getByRole("columnheader", { name: h }).waitFor();
    const whys = await strata.getByTestId("stratum-why").evaluateAll((els) => els.map((e) => [e.dataset.why, e.textContent, e.title]));
    assert.ok(whys.length === nStrata && whys.every(([why, label, title]) => why && label && title.length > 20), JSON.stringify(whys));
    assert.ok(whys.some(([why]) => why === "NEYMAN" || why === "SPREAD"), JSON.stringify(whys));
    const costs = await strata.getByTestId("stratum-cost").allInnerTexts();
    assert.ok(costs.every((c) => /^(0|[\d,.]+( [kMGT])? warp instr\.)$/.test(c)), costs.join(" | "));
    assert.ok(costs.some((c) => c !== "0"), "some stratum costs instructions");
    const shares = (await strata.getByTestId("stratum-variance").allInnerTexts()).map((t) => Number(t.replace(/ %$/, "")));
    const sum = shares.reduce((a, b) => a + b, 0);
    assert.ok(shares.every((x) => Number.isFinite(x)) && Math.abs(sum - 100) < 1, `variance shares ${shares} sum to ${sum}`);
    const chart = page.getByTestId("strata-chart");
    await chart.waitFor();
    assert.equal(await chart.getAttribute("data-scale"), "log", "durations from 1.7 µs to 49 µs are spread: log scale");
    assert.equal(await chart.getByTestId("stratum-row").count(), await strata.getByTestId("stratum").count());
    assert.equal(await chart.getByTestId("rep-marker").count(), nSamples);
    await screenshot(page, "60-sampling-plan");

    // The trace list downloads as a file, with the launches the L2 warming reads or without.
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download trace list" }).click()]);
    const text = await readFile(await download.path(), "utf8");
    assert.match(text, /^#/);
    assert.match(text, /DYNAMIC_KERNEL_LIMIT_START=\d+ DYNAMIC_KERNEL_LIMIT_END=\d+/);
    assert.match(text, /launches the L2 warming before a segment reads, never simulated/, "windows traced by default");
    // For another config's L2 than the largest: the list says whose.
    const largest = text.match(/for L2s up to (\S+) \(L2 \d+ KB\)'s/)?.[1];
    assert.ok(largest, "the default list names the largest L2's config");
    const l2Of = page.getByLabel("L2 to trace the warming for");
    const one = (await l2Of.locator("option").allInnerTexts()).find((o) => / only/.test(o) && !o.startsWith(`${largest} only`));
    assert.ok(one, `a config besides ${largest} to choose`);
    assert.match(one, /^\S+ only \(L2 [\d.]+ [KMG]iB\)$/, "each config's option says its L2's size");
    await l2Of.selectOption({ label: one });
    const [forOne] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download trace list" }).click()]);
    const oneText = await readFile(await forOne.path(), "utf8");
    assert.match(oneText, new RegExp(`for L2s up to ${one.split(" ")[0]} \\(L2 \\d+ KB\\)'s`), "the config's L2 named");
    await page.getByLabel("with the launches the L2 warming reads").uncheck();
    assert.ok(await l2Of.isDisabled(), "no L2 to choose without the warming's launches");
    const [bare] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download trace list" }).click()]);
    const bareText = await readFile(await bare.path(), "utf8");
    assert.match(bareText, /# Without the launches the L2 warming/, "warming: false");
    assert.match(bareText, /DYNAMIC_KERNEL_LIMIT_START=\d+ DYNAMIC_KERNEL_LIMIT_END=\d+/);

    // A second plan, by budget, lists first; the first stays selectable.
    await page.getByLabel("Budget (warp instructions)").check();
    await page.getByLabel("Budget in warp instructions").fill("1");
    await page.getByRole("button", { name: "Plan", exact: true }).click();
    await page.getByTestId("target-hint").getByText(/budget of 1 warp instructions is below/).waitFor();

    // SIEVE: strata by instruction count, charted along warp instructions; it lists first, and
    // the STEM plan stays selectable.
    await page.getByLabel("Error bound (%)").check();
    await page.getByLabel("Error bound in percent").fill("5");
    await page.getByRole("radio", { name: /^SIEVE/ }).check();
    await page.getByRole("button", { name: "Plan", exact: true }).click();
    await view.getByRole("heading", { name: /Plan .*: SIEVE, ±5\.00 %/ }).waitFor();
    assert.match(await page.getByTestId("strata-chart").getAttribute("aria-label"), /strata along warp instructions/);
    const rows = page.getByTestId("plan-row");
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="plan-row"]').length === 2);
    assert.match(await rows.nth(0).innerText(), /SIEVE/);
    assert.match(await rows.nth(1).innerText(), /STEM/);
    assert.equal(await rows.nth(0).getAttribute("aria-selected"), "true");
    await rows.nth(1).getByRole("link").click();
    await view.getByRole("heading", { name: /Plan .*: STEM, ±10\.0 %/ }).waitFor();
    assert.equal(await page.getByTestId("strata-chart").getAttribute("data-scale"), "log");
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page reloaded");
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("a sampled run without validate has no check until a full run of its config succeeds, then shows it live", { timeout: 240_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${TRACE}/sample`);
    await page.getByTestId("plan-view").waitFor();
    await page.getByLabel("Simulator config").selectOption(OTHER);
    await page.getByRole("button", { name: "Launch sampled run" }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    await page.evaluate(() => (window.__sameDocument = true));
    await page.locator('.run-page .toolbar [data-state="SUCCEEDED"]').waitFor({ timeout: 120_000 });
    await page.getByTestId("no-check").getByText(/No full run of this trace and config has succeeded/).waitFor();
    assert.equal(await page.getByTestId("validation-run").count(), 0);
    assert.equal(await page.getByRole("table", { name: "Run kernels" }).getByRole("columnheader", { name: /Full run/ }).count(), 0);
    const sampledId = decodeURIComponent(page.url().split("/").pop());
    // Its config has no other run: Compare configs stands by it, marked sampled.
    const compare = await browser.context.newPage();
    const compareErrors = watchErrors(compare);
    await compare.goto(`${server.url}/traces/${TRACE}/compare`);
    const configRow = compare.getByRole("table", { name: "Configs compared" }).locator(`tr[data-config="${OTHER}"]`);
    await configRow.getByRole("link", { name: sampledId, exact: true }).waitFor();
    await configRow.getByTestId(`sampled-${OTHER}`).waitFor();
    await compare.getByTestId(`sim-sampled-${OTHER}`).waitFor();
    await screenshot(compare, "64-compare-sampled");
    // A full run of the same config, launched elsewhere: its success brings the check here.
    const full = await gql(server, "mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }", { in: { traceId: TRACE, simConfig: OTHER, rerun: true } });
    await page.getByTestId("sampling-check").waitFor({ timeout: 120_000 });
    await page.getByRole("table", { name: "Run kernels" }).getByRole("columnheader", { name: /Full run/ }).waitFor();
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page reloaded");
    // The kernels CSV has what the page shows: simulated or projected from which launch, and the
    // full run's cycles of every launch.
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV", exact: true }).click()]);
    assert.equal(download.suggestedFilename(), `run-${sampledId}-kernels.csv`);
    const [header, ...lines] = (await readFile(await download.path(), "utf8")).trim().split("\n");
    const cols = header.split(",");
    const at = (line, name) => line.split(",")[cols.indexOf(name)];
    assert.ok(["simulated", "projected_from", "full_cycles", "full_error_pct"].every((c) => cols.includes(c)), header);
    assert.equal(lines.length, launches);
    const simulated = lines.filter((l) => at(l, "simulated") === "true");
    assert.ok(simulated.length > 0 && simulated.length < launches, `${simulated.length} of ${launches} simulated`);
    for (const l of lines) {
      assert.equal(at(l, "projected_from") === "", at(l, "simulated") === "true", l);
      assert.match(at(l, "full_cycles"), /^\d+$/, l);
    }
    // Compare configs now stands by the full run, not marked, live.
    await configRow.getByRole("link", { name: full.launchRun.id, exact: true }).waitFor({ timeout: 30_000 });
    assert.equal(await configRow.getByTestId(`sampled-${OTHER}`).count(), 0);
    assert.equal(await compare.getByTestId(`sim-sampled-${OTHER}`).count(), 0);
    assert.deepEqual(errors, []);
    assert.deepEqual(compareErrors, []);
    await compare.close();
    await page.close();
  });

  test("launch a sampled run with validate from the plan: it succeeds live with its projection and its check", { timeout: 240_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${TRACE}/sample`);
    // The newest plan is shown when none is chosen.
    const view = page.getByTestId("plan-view");
    await view.waitFor();
    const nSamples = Number((await page.getByTestId("plan-samples").locator(".v").innerText()).replace(/,/g, ""));
    const config = page.getByLabel("Simulator config");
    assert.equal(await config.inputValue(), "SM90_H100", "the trace's suggested config is preselected");
    await page.getByTestId("validate").check();
    await page.getByRole("button", { name: "Launch sampled run" }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    const runUrl = page.url();
    await page.evaluate(() => (window.__sameDocument = true));
    const panel = page.getByTestId("sampled-panel");
    await panel.waitFor();
    await page.getByTestId("validation-run").waitFor();

    await page.locator('.run-page .toolbar [data-state="SUCCEEDED"]').waitFor({ timeout: 120_000 });
    await page.getByTestId("progress-text").getByText(`${nSamples} of ${nSamples} representatives`).waitFor();
    await page.getByTestId("sampled-progress").getByText(`${nSamples} / ${nSamples}`).waitFor();
    await page.getByTestId("projected-cycles").getByText(/95 % interval -?[\d,]+ – [\d,]+/).waitFor({ timeout: 60_000 });
    assert.match(await page.getByTestId("projected-cycles").locator(".v").innerText(), /^[\d,]+$/);
    assert.notEqual(await page.getByTestId("projected-time").locator(".v").innerText(), "—");
    // The check arrives when the validation run has succeeded too.
    const check = page.getByTestId("sampling-check");
    await check.waitFor({ timeout: 120_000 });
    assert.match(await page.getByTestId("check-total-error").locator(".v").innerText(), /%$/);
    assert.match(await page.getByTestId("check-inside").innerText(), /inside|outside/);
    assert.match(await page.getByTestId("check-kernel-mape").innerText(), /over 48 launches/);
    await page.getByTestId("segments-summary").getByText(/succeeded/).waitFor();
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page reloaded");

    // Kernels: simulated ones and projected ones marked, with the full run's cycles.
    const table = page.getByRole("table", { name: "Run kernels" });
    await table.getByRole("columnheader", { name: /Full run/ }).waitFor();
    await table.getByTestId("simulated-mark").first().waitFor();
    await table.getByTestId("projected-mark").first().waitFor();
    assert.match(await table.getByTestId("projected-mark").first().innerText(), /^← #\d+$/);
    await screenshot(page, "61-sampled-run");

    // The trace's runs list marks it sampled, its cycles the projected total, and the validation
    // run's its own kernels' total, unmarked.
    const projected = await page.getByTestId("projected-cycles").locator(".v").innerText();
    const runId = decodeURIComponent(new URL(runUrl).pathname.split("/").pop());
    const fullId = (await gql(server, "query($id: ID!) { run(id: $id) { sampling { validationRun { id } } } }", { id: runId })).run.sampling.validationRun.id;
    await page.goto(`${server.url}/traces/${TRACE}`);
    const runs = page.getByRole("table", { name: "Runs" });
    const row = runs.locator(`tr[data-run-id="${runId}"]`);
    await row.getByTestId("sampled-run").waitFor();
    assert.equal(await row.getByTestId("run-cycles").innerText(), `≈ ${projected}`);
    const fullRow = runs.locator(`tr[data-run-id="${fullId}"]`);
    await fullRow.waitFor();
    assert.equal(await fullRow.getByTestId("sampled-run").count(), 0);
    assert.match(await fullRow.getByTestId("run-cycles").innerText(), /^[\d,]+$/);
    await screenshot(page, "63-sampled-run-in-list");
    await page.goto(runUrl);

    // A segment's page links back to its sampled run.
    await page.getByTestId("segment").first().getByRole("link").click();
    await page.getByTestId("sampled-by").waitFor();
    await screenshot(page, "62-sampled-segment");
    await page.getByTestId("sampled-by").getByRole("link").click();
    await page.waitForURL(runUrl);
    await page.getByTestId("sampled-panel").waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("plan with one step of the program as warm-up", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${TRACE}/sample`);
    await page.getByRole("heading", { name: "New plan" }).waitFor();
    // 10 %: a representative stands for several launches (at 1 % each of these 48 is its own,
    // and needs no warm-up).
    await page.getByLabel("Error bound in percent").fill("10");
    const step = page.getByRole("checkbox", { name: /One step of the program \(the default\)/ });
    await step.uncheck();
    await page.getByLabel("Warm-up launches").fill("3");
    await step.check();
    assert.equal(await page.getByLabel("Warm-up launches").isDisabled(), true, "a step excludes a count of launches");
    const before = await page.getByTestId("plan-row").count();
    const shown = page.url();
    await page.getByRole("button", { name: "Plan", exact: true }).click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="plan-row"]').length === n + 1, before);
    await page.waitForURL((u) => u.toString() !== shown && /\?plan=/.test(u.toString()));
    await page.getByTestId("plan-row").first().and(page.locator('[aria-selected="true"]')).waitFor();
    const warm = await page.getByTestId("plan-view").locator("dt", { hasText: "Warm-up" }).locator("xpath=following-sibling::dd[1]").innerText();
    const m = warm.match(/^(\d+) launches before each representative \(a step of the program\)$/);
    assert.ok(m && Number(m[1]) === 4, `warm-up: ${warm}, want a step: the 4 kernels every layer launches`);
    // The list says which plan's warm-up is a step, and which is launches.
    assert.equal(await page.getByTestId("plan-row").first().getByTestId("plan-warmup").innerText(), "a step (4 launches)");
    assert.match(await page.getByTestId("plan-row").last().getByTestId("plan-warmup").innerText(), /^\d+ launch(es)?$/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("the plan's wall time on this server, and the plan evaluated against a stored full run", { timeout: 120_000 }, async () => {
    // The runs above ran the fake simulator under SM90_H100 (segments and a validation full run)
    // and OTHER (segments and a full run): their wall times measure its rate.
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${TRACE}/sample`);
    const view = page.getByTestId("plan-view");
    await view.waitFor();
    const planId = await view.getAttribute("data-plan");
    const wall = page.getByTestId("wall-estimate");
    assert.equal(await wall.getByLabel("Config to estimate").inputValue(), "SM90_H100", "the trace's default config first");
    await wall.getByTestId("wall-sampled").waitFor();
    const { samplingPlan } = await gql(server, "query($id: ID!) { samplingPlan(id: $id) { segments { start } wallEstimate(config: \"SM90_H100\") { runs segments concurrency seconds fullSeconds measuredFullSeconds instructionsPerSecond } } }", { id: planId });
    const est = samplingPlan.wallEstimate;
    assert.ok(est && est.runs >= 2 && est.instructionsPerSecond > 0 && est.seconds > 0 && est.fullSeconds > 0, JSON.stringify(est));
    assert.equal(est.segments, samplingPlan.segments.length, "a process per segment");
    assert.equal(est.concurrency, Math.min(2, est.segments), "CASCADE_RUN_CONCURRENCY=2");
    assert.ok(est.measuredFullSeconds > 0, "the validation run is a measured full run of the trace");
    assert.match(await wall.getByTestId("wall-sampled").innerText(), new RegExp(`${est.segments} segments?, ${est.concurrency} at once`));
    assert.match(await wall.getByTestId("wall-sampled").locator(".v").innerText(), /\d (ms|s|min|h)/);
    assert.match(await wall.getByTestId("wall-full").locator(".v").innerText(), /\d (ms|s|min|h)/);
    assert.match(await wall.getByTestId("wall-basis").innerText(), /warp instr\.\/s, measured on \d+ recent runs/);
    // A config no run of this server used has no estimate, and says so.
    const unused = (await wall.getByLabel("Config to estimate").locator("option").allInnerTexts()).find((n) => n !== "SM90_H100" && n !== OTHER);
    await wall.getByLabel("Config to estimate").selectOption(unused);
    await wall.getByTestId("no-estimate").getByText(new RegExp(`No finished run of ${unused}`)).waitFor();
    await wall.getByLabel("Config to estimate").selectOption(OTHER);
    await wall.getByTestId("wall-sampled").waitFor();

    // Evaluate: the trace's succeeded full runs (not sampled runs) are listed; evaluating shows
    // the projection against the full run's cycles.
    const ev = page.getByTestId("evaluate");
    const picker = ev.getByLabel("Full run to evaluate against");
    await picker.waitFor();
    const options = await picker.locator("option").allInnerTexts();
    assert.ok(options.length >= 2 && options.some((o) => o.includes("SM90_H100")) && options.some((o) => o.includes(OTHER)), options.join(" | "));
    const runId = await picker.inputValue();
    await ev.getByRole("button", { name: "Evaluate" }).click();
    const result = ev.getByTestId("evaluation");
    await result.waitFor();
    assert.equal(await result.getAttribute("data-run"), runId);
    const num = async (id) => Number((await result.getByTestId(id).innerText()).split(" ")[0].replace(/,/g, ""));
    const projected = await num("eval-projected");
    const fullCycles = await num("eval-full");
    const want = (await gql(server, "query($id: ID!, $run: ID!) { samplingPlan(id: $id) { evaluate(run: $run) { projectedCycles fullCycles inside } } }", { id: planId, run: runId })).samplingPlan.evaluate;
    assert.equal(projected, Math.round(want.projectedCycles));
    assert.equal(fullCycles, Math.round(want.fullCycles));
    assert.match(await result.getByTestId("eval-error").innerText(), /^([+−][\d.]+ %|0 %) \(stated ±[\d.]+ %\)$/);
    assert.equal(await result.getByTestId("eval-inside").innerText(), want.inside ? "inside the 95 % interval" : "outside the 95 % interval");
    await screenshot(page, "65-sampling-plan-estimates");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
