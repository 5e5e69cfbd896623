// Test harness for the end-to-end tests: a real `cascade serve` and a real headless Chromium.
import { execFile, spawn } from "node:child_process";
import { closeSync, constants, existsSync, openSync } from "node:fs";
import { appendFile, mkdtemp, mkdir, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
// REPO is the repository's root; SIM_CONFIGS the sim configs a test's server offers.
export const REPO = join(here, "..", "..");
export const SIM_CONFIGS = process.env.CASCADE_SIM_CONFIGS_DIR ?? join(REPO, "samples", "sim-configs");
// simSkip is why a test that runs simulations is skipped (no simulator, or no configs), or false.
export const simSkip = !process.env.CASCADE_SIM_CMD
  ? "set CASCADE_SIM_CMD to a simulator (the repository's fakesim will do)"
  : !existsSync(SIM_CONFIGS)
    ? `no sim configs at ${SIM_CONFIGS}`
    : false;
export const SCREENSHOTS = join(here, "screenshots");
export const CHROMIUM = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Every server this test file started, so that a failing file shows the end of each one's log
// (node --test passes a file's stderr on as "# " lines after its results).
const started = [];
const LOG_TAIL_LINES = 60;
process.on("exit", (code) => {
  if (code === 0) return;
  for (const { url, output } of started) {
    const lines = output().trimEnd().split("\n");
    process.stderr.write(`cascade serve on ${url}, the last ${Math.min(lines.length, LOG_TAIL_LINES)} of its ${lines.length} log lines:\n`);
    process.stderr.write(lines.slice(-LOG_TAIL_LINES).join("\n") + "\n");
  }
});

/** Starts `$CASCADE_BIN serve` on a fresh data dir (or the one given) and waits until it answers. */
export async function startServer({ dataDir, port, env = {} } = {}) {
  const bin = process.env.CASCADE_BIN;
  if (!bin) throw new Error("set CASCADE_BIN to the cascade binary (go build -o /tmp/cascade ./cmd/cascade)");
  dataDir ??= await mkdtemp(join(tmpdir(), "cascade-e2e-"));
  // Port 0 unless a test restarts a server on its old port: the kernel picks a free one and
  // the server says which. (A port picked here and freed before the server binds it can be
  // taken meanwhile by a test file running beside this one.)
  const proc = spawn(bin, ["serve"], {
    env: {
      ...process.env,
      CASCADE_DATA_DIR: dataDir,
      CASCADE_ADDR: `127.0.0.1:${port ?? 0}`,
      CASCADE_SCAN_INTERVAL: "200ms",
      CASCADE_S3_ADDR: "127.0.0.1:0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  proc.stdout.on("data", (d) => (output += d));
  proc.stderr.on("data", (d) => (output += d));
  const exited = new Promise((r) => proc.once("exit", (code, sig) => r({ code, sig })));
  const entry = { url: `an address not yet printed (data ${dataDir})`, output: () => output };
  started.push(entry);
  const deadline = Date.now() + 30_000;
  let url;
  for (;;) {
    const gone = await Promise.race([exited, sleep(100).then(() => null)]);
    if (gone) throw new Error(`cascade serve exited (${JSON.stringify(gone)}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`cascade serve did not answer ${url ? `on ${url} ` : ""}in 30 s:\n${output}`);
    url ??= output.match(/cascade: serving (http:\/\/\S+) /)?.[1];
    if (!url) continue;
    entry.url = url;
    try {
      // A server with tokens answers only with one.
      const headers = env.CASCADE_TOKEN ? { Authorization: `Bearer ${env.CASCADE_TOKEN}` } : {};
      const r = await fetch(`${url}/graphql?query=${encodeURIComponent("{__typename}")}`, { headers });
      if (r.ok) break;
    } catch {
      /* not listening yet */
    }
  }
  port = Number(new URL(url).port);
  const bucket = join(dataDir, "s3", "cascade", "traces");
  return {
    url,
    port,
    dataDir,
    env,
    bucket,
    output: () => output,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(t);
      }
    },
    async cleanup() {
      await this.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Uploads a local trace directory into the server's bucket with `cascade upload`, as users do. */
/** Runs a GraphQL operation on the server as a script would (POST /graphql); throws on errors. */
export async function gql(server, query, variables = {}) {
  const r = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  const body = await r.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

/** Resolves once the trace is READY (asked by the test, not the UI); throws after 30 s. */
export async function waitReady(server, id) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const d = await gql(server, "query($id: ID!) { trace(id: $id) { state } }", { id });
    if (d.trace?.state === "READY") return;
    if (Date.now() > deadline) throw new Error(`trace ${id} is ${d.trace?.state}, not READY, after 30 s`);
    await sleep(200);
  }
}

export async function upload(server, dir, runName) {
  await promisify(execFile)(process.env.CASCADE_BIN, ["upload", dir, "--run-name", runName, "--data-dir", server.dataDir]);
}

/**
 * A named pipe for the stand-in simulator's FAKESIM_STEP: each kernel's statistics wait for a
 * line, so a test holds a run at a known kernel for as long as it needs, whatever the
 * machine's speed. step() lets it on by one kernel (its open waits until a simulator holds
 * the pipe; a line written ahead waits there).
 */
export async function simStepper() {
  const dir = await mkdtemp(join(tmpdir(), "cascade-step-"));
  const path = join(dir, "step");
  await promisify(execFile)("mkfifo", [path]);
  return {
    path,
    step: () => appendFile(path, "\n"),
    async close() {
      // Opening the reading end lets a step nobody took finish, so the process can exit.
      closeSync(openSync(path, constants.O_RDONLY | constants.O_NONBLOCK));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// startHeld starts what a test of held simulations needs: a stepper (simStepper), a server
// offering SIM_CONFIGS whose simulator that stepper holds (env added), a browser, and the
// quickstart sample uploaded under each id of quickstarts. What started is stopped again when
// a later part fails. stopHeld stops them all; either takes what the other gave.
export async function startHeld({ env = {}, quickstarts = [] } = {}) {
  const held = {};
  try {
    held.sim = await simStepper();
    held.server = await startServer({ env: { CASCADE_SIM_CONFIGS_DIR: SIM_CONFIGS, FAKESIM_STEP: held.sim.path, ...env } });
    held.browser = await launchBrowser();
    for (const id of quickstarts) await upload(held.server, join(REPO, "samples", "quickstart"), id);
    return held;
  } catch (err) {
    await stopHeld(held);
    throw err;
  }
}

export async function stopHeld({ server, browser, sim } = {}) {
  await browser?.close();
  await server?.cleanup();
  await sim?.close();
}

export async function launchBrowser() {
  const profile = await mkdtemp(join(tmpdir(), "cascade-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 900 },
  });
  context.setDefaultTimeout(20_000);
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export async function screenshot(page, name) {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Collects the page's console errors and uncaught exceptions. */
export function watchErrors(page) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  return errors;
}

/** A small trace written the way an upload does: file by file, metadata.json (with files) last. */
export function traceFiles(id, kernels = 3) {
  const ctx = "0x1";
  const files = [];
  for (let k = 1; k <= kernels; k++) {
    files.push([`traces/kernel-${k}-ctx_${ctx}.trace`, `-kernel name = _Z${`kernel${k}`.length}kernel${k}Pf\n-kernel id = ${k}\n` + "x".repeat(2000 * k) + "\n"]);
  }
  for (let k = 1; k <= kernels; k++) {
    files.push([
      `traces/kernel-${k}-ctx_${ctx}.traceg`,
      `-kernel name = _Z${`kernel${k}`.length}kernel${k}Pf\n-kernel id = ${k}\n-grid dim = (${k * 8},1,1)\n-block dim = (${k * 32},1,1)\n-shmem = 0\n`,
    ]);
  }
  files.push([
    `traces/kernelslist_ctx_${ctx}`,
    Array.from({ length: kernels }, (_, i) => `kernel-${i + 1}-ctx_${ctx}.trace\n`).join(""),
  ]);
  files.push([
    `traces/stats_ctx_${ctx}`,
    "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n" +
      Array.from({ length: kernels }, (_, i) => {
        const k = i + 1;
        return `kernel-${k}-ctx_${ctx}.trace, _Z${`kernel${k}`.length}kernel${k}Pf, ${k * 8}, 1, 1, ${k * 8}, ${k * 32}, 1, 1, ${k * 32}, ${k * 1000},${k * 1000}\n`;
      }).join(""),
  ]);
  files.push([
    "traces/kernelslist.g",
    Array.from({ length: kernels }, (_, i) => `kernel-${i + 1}-ctx_${ctx}.traceg\n`).join(""),
  ]);
  const meta = {
    run_name: id,
    model: "e2e/Tiny-Model-1B",
    layers: [0, 1],
    prompts: ["Hello from the end-to-end test"],
    gpu: "NVIDIA H100 80GB HBM3",
    trace_gpu_arch: "sm_90",
    files: files.map(([path, text]) => ({ path, size: Buffer.byteLength(text) })),
  };
  files.push(["metadata.json", JSON.stringify(meta, null, 2) + "\n"]);
  return files;
}

export async function writeTraceFile(bucket, id, path, text) {
  const full = join(bucket, id, path);
  await mkdir(dirname(full), { recursive: true });
  // Write under a dotfile name and rename, as rclone does, so no scan sees half a file.
  const tmp = join(dirname(full), `.rclone_temp_put_${Date.now()}`);
  await writeFile(tmp, text);
  const { rename } = await import("node:fs/promises");
  await rename(tmp, full);
}

/** A ready-on-upload trace with n kernels (kernelslist.g and one stats file), for scrolling. */
export function bigTraceFiles(n) {
  const ctx = "0x1";
  const header =
    "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n";
  const stats = [header];
  const raw = [];
  const processed = [];
  for (let k = 1; k <= n; k++) {
    const g = (k % 1024) + 1;
    stats.push(`kernel-${k}-ctx_${ctx}.trace, _Z10big_kernelILi${k}EEvPf, ${g}, 1, 1, ${g}, 128, 1, 1, 128, ${k * 10},${k * 10}\n`);
    raw.push(`kernel-${k}-ctx_${ctx}.trace\n`);
    processed.push(`kernel-${k}-ctx_${ctx}.traceg\n`);
  }
  const files = [
    [`traces/kernelslist_ctx_${ctx}`, raw.join("")],
    [`traces/stats_ctx_${ctx}`, stats.join("")],
    ["traces/kernelslist.g", processed.join("")],
  ];
  const meta = {
    model: "e2e/Big-Model",
    gpu: "NVIDIA H100 80GB HBM3",
    files: files.map(([path, text]) => ({ path, size: Buffer.byteLength(text) })),
  };
  files.push(["metadata.json", JSON.stringify(meta) + "\n"]);
  return files;
}

/** An upload whose raw kernel trace the post-processor refuses, so the trace fails. */
export function brokenTraceFiles() {
  const files = [
    ["traces/kernel-1-ctx_0x1.trace", "this is not a trace\n"],
    ["traces/kernelslist_ctx_0x1", "kernel-1-ctx_0x1.trace\n"],
    [
      "traces/stats_ctx_0x1",
      "kernel id, kernel mangled name, grid_dimX, grid_dimY, grid_dimZ, #blocks, block_dimX, block_dimY, block_dimZ, #threads, total_insts, total_reported_insts\n" +
        "kernel-1-ctx_0x1.trace, _Z6brokenv, 4, 1, 1, 4, 64, 1, 1, 64, 10,10\n",
    ],
  ];
  const meta = { model: "e2e/Broken", files: files.map(([path, text]) => ({ path, size: Buffer.byteLength(text) })) };
  files.push(["metadata.json", JSON.stringify(meta) + "\n"]);
  return files;
}

/** traceFiles without the processed files, so the server has to post-process it. */
export function rawTraceFiles(id, kernels = 2) {
  const files = traceFiles(id, kernels).filter(([p]) => !p.endsWith(".traceg") && p !== "traces/kernelslist.g" && p !== "metadata.json");
  const meta = { model: "e2e/Raw-Model", gpu: "NVIDIA H100 80GB HBM3", files: files.map(([path, text]) => ({ path, size: Buffer.byteLength(text) })) };
  files.push(["metadata.json", JSON.stringify(meta) + "\n"]);
  return files;
}
