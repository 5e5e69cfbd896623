// End-to-end: a run identical to a succeeded one is not simulated again; its page says so and
// links the original, and New run's "Simulate again" simulates anyway.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim npm run e2e -- e2e/reuse.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchBrowser, screenshot, startServer, upload, watchErrors } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const configs = join(repo, "samples", "sim-configs");
const skip = !process.env.CASCADE_SIM_CMD ? "set CASCADE_SIM_CMD to a simulator (the repository's fakesim will do)" : !existsSync(configs) ? `no sim configs at ${configs}` : false;
const QS = "qs-reuse";

describe("reusing an identical run", { skip }, () => {
  let server;
  let browser;
  before(async () => {
    server = await startServer({ env: { CASCADE_SIM_CONFIGS_DIR: configs } });
    browser = await launchBrowser();
    await upload(server, join(repo, "samples", "quickstart"), QS);
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  test("the second identical run links the first; Simulate again simulates", { timeout: 180_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/traces/${QS}`);
    await page.locator('.trace-page .toolbar [data-state="READY"]').waitFor({ timeout: 30_000 });
    const gql = (query, variables) =>
      page.evaluate(
        async ([query, variables]) => (await (await fetch("/graphql", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ query, variables }) })).json()),
        [query, variables],
      );
    const launch = `mutation($t: ID!) { launchRun(input: {traceId: $t, simConfig: "SM90_H100"}) { id state sameAs { id } } }`;
    const first = (await gql(launch, { t: QS })).data.launchRun;
    for (const deadline = Date.now() + 120_000; ; ) {
      const r = (await gql(`query($id: ID!) { run(id: $id) { state } }`, { id: first.id })).data.run;
      if (r.state === "SUCCEEDED") break;
      assert.ok(r.state !== "FAILED" && Date.now() < deadline, `first run: ${JSON.stringify(r)}`);
      await new Promise((res) => setTimeout(res, 200));
    }
    const second = (await gql(launch, { t: QS })).data.launchRun;
    assert.equal(second.state, "SUCCEEDED");
    assert.equal(second.sameAs?.id, first.id);

    await page.goto(`${server.url}/runs/${second.id}`);
    const note = page.getByTestId("same-as");
    await note.getByText("Not simulated again").waitFor();
    await note.getByRole("link", { name: first.id }).waitFor();
    await screenshot(page, "30-run-reused");

    // New run with "Simulate again": a run of its own.
    await page.goto(`${server.url}/traces/${QS}`);
    await page.getByRole("button", { name: "New run" }).click();
    await page.getByRole("radio", { name: /SM90_H100/ }).check();
    await page.getByTestId("rerun").check();
    await page.getByRole("button", { name: "Launch run" }).click();
    await page.getByRole("heading", { level: 1 }).filter({ hasNotText: "New run" }).waitFor();
    const id = new URL(page.url()).pathname.split("/").pop();
    assert.notEqual(id, first.id);
    const third = (await gql(`query($id: ID!) { run(id: $id) { sameAs { id } } }`, { id })).data.run;
    assert.equal(third.sameAs, null, "Simulate again reused a run");
    assert.equal(await page.getByTestId("same-as").count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
