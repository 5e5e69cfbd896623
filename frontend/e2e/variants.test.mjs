// End-to-end: New run's variant picker. A modifier of define-standard-cfgs.yml and an override
// typed as the simulator takes them are checked by the simulator as they are picked; a modifier
// the simulator does not know is refused before anything is launched, naming it; the run
// launched records the variant, and its page shows the overrides. The stand-in simulator halves
// the cycles with half the clusters, as the design-space page shows.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim npm run e2e -- e2e/variants.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchBrowser, screenshot, startServer, upload, watchErrors } from "./harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const configs = join(repo, "samples", "sim-configs");
const modifiers = join(here, "fixtures", "define-standard-cfgs.yml");
const skip = !process.env.CASCADE_SIM_CMD ? "set CASCADE_SIM_CMD to a simulator (the repository's fakesim will do)" : !existsSync(configs) ? `no sim configs at ${configs}` : false;
const QS = "qs-variants";

describe("config variants", { skip }, () => {
  let server;
  let browser;
  before(async () => {
    server = await startServer({ env: { CASCADE_SIM_CONFIGS_DIR: configs, CASCADE_CONFIG_MODIFIERS: modifiers } });
    browser = await launchBrowser();
    await upload(server, join(repo, "samples", "quickstart"), QS);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  test("pick a modifier and an override, see them checked, launch", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${QS}`);
    await page.locator('.trace-page .toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "New run" }).click();
    await page.getByRole("radio", { name: /SM90_H100/ }).check();
    const picker = page.getByTestId("variant-picker");
    const status = page.getByTestId("variant-status");
    await status.getByText("SM90_H100 as shipped.").waitFor();

    // A modifier the simulator does not know: refused, naming it; nothing can be launched.
    await picker.getByText("Modifiers").click();
    await page.getByTestId("modifier-L1OFF").check();
    await status.getByText(/Unknown Option: '-gmem_skip_L1D'.*from modifier L1OFF/).waitFor({ timeout: 20_000 });
    assert.equal(await page.getByRole("button", { name: "Launch run" }).isDisabled(), true);
    await page.getByTestId("modifier-L1OFF").uncheck();

    // A known one, and an override.
    await page.getByTestId("modifier-66SM").check();
    await page.getByLabel("Overrides").fill("-gpgpu_clock_domains 1000.0:1000.0:1000.0:2619.0");
    await status.getByText("✓ SM90_H100-66SM -gpgpu_clock_domains 1000.0:1000.0:1000.0:2619.0").waitFor({ timeout: 20_000 });
    await status.getByText(/-gpgpu_n_clusters 66 \(66SM\)/).waitFor();
    await status.getByText(/core clock 1000 MHz/).waitFor();
    await screenshot(page, "40-variant-picker");
    await page.getByRole("button", { name: "Launch run" }).click();
    await page.getByRole("heading", { level: 1 }).filter({ hasNotText: "New run" }).waitFor();
    const overrides = page.getByTestId("run-overrides");
    await overrides.getByText(/-gpgpu_n_clusters 66 \(66SM\), -gpgpu_clock_domains 1000.0:1000.0:1000.0:2619.0/).waitFor();
    await overrides.getByText(/on SM90_H100/).waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  });
});
