// End-to-end for the hardware-counter correlation: the quickstart trace with a small Nsight
// Compute raw page of its four kernels, run under two configs with the stand-in simulator. The
// run page's figures per statistic, its scatter (points, hover, log axes) and CSVs; the
// compare page's statistics × configs, live as the second run finishes, with its CSV.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim node --test e2e/correlation.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gql, launchBrowser, screenshot, sleep, startServer, upload, waitReady, watchErrors } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const configs = join(repo, "samples", "sim-configs");
const quickstart = join(repo, "samples", "quickstart");
const skip = !process.env.CASCADE_SIM_CMD
  ? "set CASCADE_SIM_CMD to a simulator (the repository's fakesim will do)"
  : !existsSync(configs)
    ? `no sim configs at ${configs}`
    : false;

const TRACE = "corr-e2e";
const H100 = "SM90_H100";
// The RTX 3070's config with half its clusters: the stand-in simulator's cycles double, and
// the config models an sm_86 GPU, not the profile's H100.
const RTX = "SM86_RTX3070 -gpgpu_n_clusters 23";
const CTX = "0x55d2c3a1e4f0";
const NAMES = [
  "_ZN4vllm15rms_norm_kernelIN3c108BFloat16EEEvPT_PKS3_S6_fii",
  "_Z14gemm_bf16_tileILi64ELi64EEvPK13__nv_bfloat16S2_PS0_iii",
  "_ZN4vllm18act_and_mul_kernelIN3c108BFloat16EEEvPT_PKS3_i",
  "_Z19residual_add_kernelP13__nv_bfloat16PKS_i",
];
// The stand-in simulator runs kernel i (1-based) of a trace of size bytes in 1000 i + size
// cycles (testkit/fakesim).
const simCycles = NAMES.map((_, i) => 1000 * (i + 1) + statSync(join(quickstart, "traces", `kernel-${i + 1}-ctx_${CTX}.traceg`)).size);
// What the profile measured of each kernel: cycles, warp instructions, L2 read hits and
// sectors, DRAM sectors read (spanning more than two decades: log axes).
const MEASURED = {
  "gpc__cycles_elapsed.max": [3900, 12000, 6800, 5200],
  "smsp__inst_executed.sum": [250, 1000, 300, 113],
  "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum": [0, 200, 100, 64],
  "lts__t_sectors_srcunit_tex_op_read.sum": [180, 700, 220, 80],
  "dram__sectors_read.sum": [5000, 600, 100, 20],
};
const STATS = ["cycles", "warp_instructions", "l2_read_hits", "l2_read_accesses", "dram_reads"];
const mape = (sim, meas) => sim.reduce((s, v, i) => s + Math.abs((100 * (v - meas[i])) / meas[i]), 0) / sim.length;
const fmtPct = (p) => `${Math.abs(p).toFixed(Math.abs(p) >= 100 ? 0 : 1)} %`;

/** Nsight Compute's raw page (ncu --csv --page raw) of the quickstart's launches, as metadata.json names it. */
function ncuRawPage() {
  const q = (cells) => cells.map((c) => `"${c}"`).join(",");
  const metrics = Object.keys(MEASURED);
  const head = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "device__attribute_display_name", ...metrics];
  const units = ["", "", "", "", "", "", "", "", "", "", "", "", "cycle", "inst", "sector", "sector", "sector"];
  const rows = NAMES.map((n, i) =>
    q([i, 4242, "python3", "127.0.0.1", n, 1, 7, "(64, 1, 1)", "(2, 1, 1)", 0, "9.0", "NVIDIA H100 80GB HBM3", ...metrics.map((m) => MEASURED[m][i].toLocaleString("en-US"))]),
  );
  return ["==PROF== Connected to process 4242 (/usr/bin/python3)", q(head), q(units), ...rows, ""].join("\n");
}

const launch = (server, simConfig) =>
  gql(server, "mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }", { in: { traceId: TRACE, simConfig, rerun: true } }).then((d) => d.launchRun.id);

async function succeeded(server, id) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
    const d = await gql(server, "query($id: ID!) { run(id: $id) { state error } }", { id });
    if (d.run.state === "SUCCEEDED") return;
    if (d.run.state === "FAILED" || d.run.state === "CANCELLED") throw new Error(`run ${id} ${d.run.state}: ${d.run.error}`);
  }
  throw new Error(`run ${id} did not succeed in 60 s`);
}

/** Clicks a download button and returns the CSV's lines. */
async function downloadCsv(page, button, filename) {
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: button }).click()]);
  assert.equal(download.suggestedFilename(), filename);
  return (await readFile(await download.path(), "utf8")).trim().split("\n");
}

describe("hardware counters against a real server", { skip }, () => {
  let server;
  let browser;
  let dir;
  let h100Run;
  before(async () => {
    server = await startServer({ env: { CASCADE_SIM_CONFIGS_DIR: configs, CASCADE_RUN_CONCURRENCY: "1" } });
    dir = await mkdtemp(join(tmpdir(), "cascade-corr-"));
    await cp(quickstart, dir, { recursive: true });
    await mkdir(join(dir, "profiles"));
    await writeFile(join(dir, "profiles", "ncu.csv"), ncuRawPage());
    const meta = JSON.parse(await readFile(join(dir, "metadata.json"), "utf8"));
    await writeFile(join(dir, "metadata.json"), JSON.stringify({ ...meta, profiles: ["profiles/ncu.csv"] }));
    browser = await launchBrowser();
    await upload(server, dir, TRACE);
    await waitReady(server, TRACE);
    h100Run = await launch(server, H100);
    await succeeded(server, h100Run);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("a run's figures per statistic, its scatter named on hover, log axes over decades, and its CSVs", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    // The trace page says where its measured times come from, and what its profile held.
    await page.goto(`${server.url}/traces/${TRACE}`);
    await page.getByTestId("trace-profiles").getByText("ncu, NVIDIA H100 80GB HBM3: 4 of 4 launches matched").waitFor();
    await page.getByTestId("measured-from").getByText(/real_timing\.json: duration_ns/).waitFor();
    await page.goto(`${server.url}/runs/${h100Run}`);
    const section = page.getByTestId("hardware-counters");
    const table = section.getByRole("table", { name: "Statistics against hardware counters" });
    const cycles = table.locator('tr[data-stat="cycles"]');
    await cycles.waitFor();
    assert.equal(await cycles.locator('[data-figure="kernels"]').innerText(), "4");
    assert.equal(await cycles.locator('[data-figure="mape"]').innerText(), fmtPct(mape(simCycles, MEASURED["gpc__cycles_elapsed.max"])));
    // Kernel 4 is within 1 % (5192 against 5200); two are over, two under.
    assert.equal(await cycles.locator('[data-figure="within1"]').innerText(), "1");
    for (const s of STATS) await table.locator(`tr[data-stat="${s}"]`).waitFor();
    // The profile's GPU is the H100 the config models: no warning.
    assert.equal(await section.getByTestId("gpu-warnings").count(), 0);

    // The scatter of cycles: a point per kernel, linear axes (3,550 to 12,803 cycles); the arrow
    // keys step through the points by measured value, the pointer names the point it is on.
    const scatter = section.getByTestId("counter-scatter");
    await scatter.locator("canvas").waitFor();
    assert.equal(await scatter.getAttribute("data-points"), "4");
    assert.equal(await scatter.getAttribute("data-axes"), "linear");
    await scatter.focus();
    await page.keyboard.press("ArrowRight");
    const tip = page.getByRole("tooltip");
    await tip.getByText(/rms_norm_kernel/).waitFor(); // the least measured (3,900)
    await tip.getByText(`simulated ${simCycles[0].toLocaleString("en-US")} · measured 3,900`).waitFor();
    for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowRight");
    await tip.getByText(/gemm_bf16_tile/).waitFor(); // the greatest (12,000)
    const [x, y] = [Number(await tip.getAttribute("data-x")), Number(await tip.getAttribute("data-y"))];
    await scatter.blur();
    await tip.waitFor({ state: "detached" });
    const over = await scatter.locator(".u-over").boundingBox();
    await page.mouse.move(over.x + x + 2, over.y + y - 1);
    await tip.getByText(/gemm_bf16_tile/).waitFor();
    assert.doesNotMatch(await tip.innerText(), /_Z\w+/, "the tooltip names the kernel as the tables do");
    await screenshot(page, "95-run-hardware-counters");

    // DRAM sectors read span more than two decades: log axes.
    await table.getByRole("button", { name: "dram_reads" }).click();
    await section.locator('[data-testid="counter-scatter"][data-axes="log"]').waitFor();
    await section.getByRole("heading", { name: "dram_reads: simulated against measured" }).waitFor();
    await section.getByTestId("furthest-off").locator("li").first().waitFor();
    await screenshot(page, "97-run-hardware-counters-log");

    const figures = await downloadCsv(page, "Download figures (CSV)", `run-${h100Run}-correlation.csv`);
    assert.match(figures[0], /^run,sim_config,stat,unit,kernels,pearson,mae,mape_pct,/);
    assert.deepEqual(figures.slice(1).map((l) => l.split(",")[2]), STATS);
    assert.match(figures[1], new RegExp(`^${h100Run},${H100},cycles,cycles,4,`));
    const pairs = await downloadCsv(page, "Download pairs (CSV)", `run-${h100Run}-counters.csv`);
    assert.equal(pairs[0], "seq,kernel_id,context,name,stat,simulated,measured,measured_min,measured_max,measurements,sim_over_measured,error_pct,representative");
    const cyclePairs = pairs.slice(1).filter((l) => l.split(",")[4] === "cycles");
    assert.equal(cyclePairs.length, 4);
    assert.match(cyclePairs[3], new RegExp(`^3,4,${CTX},${NAMES[3]},cycles,${simCycles[3]},5200,5200,5200,1,`));
    assert.equal(pairs.length - 1, 4 * STATS.length);
    assert.deepEqual(errors, []);
  });

  test("statistics × configs on Compare configs, live as a second config's run finishes, with its CSV", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${TRACE}/compare`);
    const section = page.getByTestId("config-correlation");
    const table = section.getByRole("table", { name: "Statistics × configs" });
    await table.getByTestId(`corr-cycles-${H100}`).waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    await section.getByText("No statistic ranks two configs yet.").waitFor();

    const rtxRun = await launch(server, RTX);
    const rtxCycles = table.getByTestId(`corr-cycles-${RTX}`).locator('[data-figure="ranked"]');
    await rtxCycles.waitFor({ timeout: 60_000 });
    const measured = MEASURED["gpc__cycles_elapsed.max"];
    assert.equal(await rtxCycles.innerText(), fmtPct(mape(simCycles.map((c) => 2 * c), measured)));
    assert.equal(await table.getByTestId(`corr-cycles-${H100}`).locator('[data-figure="ranked"]').innerText(), fmtPct(mape(simCycles, measured)));
    // Cycles rank the H100 first; the other statistics are the same under both (the stand-in
    // simulator's clusters change only cycles): tied, no best there.
    assert.equal(await table.getByTestId(`corr-cycles-${H100}`).getAttribute("data-best"), "true");
    assert.equal(await table.locator("td[data-best]").count(), 1);
    for (const s of STATS) await table.getByTestId(`corr-${s}-${RTX}`).locator('[data-figure="ranked"]').waitFor();
    await section.getByTestId("correlation-best").getByText(H100, { exact: true }).waitFor();
    // The RTX config models another GPU than the profile's H100: said on its column and below.
    await table.getByTestId(`gpu-warning-${RTX}`).waitFor();
    assert.equal(await table.getByTestId(`gpu-warning-${H100}`).count(), 0);
    const warning = await section.getByTestId("config-gpu-warnings").locator("li").innerText();
    assert.match(warning, /^SM86_RTX3070 -gpgpu_n_clusters 23: profile profiles\/ncu\.csv was measured on NVIDIA H100 80GB HBM3 \(sm_90\); config SM86_RTX3070 -gpgpu_n_clusters 23 models sm_86: its figures set two GPUs side by side$/);
    assert.equal(await page.evaluate(() => window.__sameDocument), true, "the compare page reloaded");
    await screenshot(page, "96-compare-hardware-counters");

    const lines = await downloadCsv(page, "Download figures per config (CSV)", `trace-${TRACE}-correlation.csv`);
    assert.match(lines[0], /^sim_config,run,sampled,stat,unit,kernels,.*,ranked_by,best,best_overall,gpu_warnings$/);
    const rows = lines.slice(1);
    assert.equal(rows.length, 2 * STATS.length);
    const cyc = rows.filter((l) => l.includes(",cycles,cycles,"));
    assert.equal(cyc.length, 2);
    assert.match(cyc.find((l) => l.startsWith(`${H100},`)), new RegExp(`^${H100},${h100Run},false,cycles,cycles,4,.*,MAPE,true,true,$`));
    assert.match(cyc.find((l) => l.startsWith(`"${RTX}"`) || l.startsWith(`${RTX},`)), new RegExp(`${rtxRun},false,cycles,cycles,4,.*,MAPE,false,false,.*models sm_86: its figures set two GPUs side by side`));

    // The run page of that config says the profile is of another GPU, beside its figures.
    await page.goto(`${server.url}/runs/${rtxRun}`);
    await page.getByTestId("gpu-warnings").getByText(/measured on NVIDIA H100 80GB HBM3 .*models sm_86/).waitFor();
    assert.deepEqual(errors, []);
  });
});
