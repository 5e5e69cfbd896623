// End-to-end: a query's answer is a snapshot of when the server ran the query, and live events
// that arrived while it travelled may be newer. The UI re-runs its queries after a reconnect and
// once more a second after subscribing; an answer that lands after a newer event must not put
// the older state back on screen. (CI once failed app.test.mjs this way: the Traces screen's
// refetch, answered while the trace went READY, showed it processing again, and for good, since
// READY is a trace's last event.) Here the browser's request is held while the trace moves on.
//   CASCADE_BIN=/path/to/cascade npm run e2e
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { launchBrowser, startServer, traceFiles, watchErrors, writeTraceFile } from "./harness.mjs";

const ID = `stale-${Date.now().toString(36)}`;

/** Resolves with the trace's state once the server has the trace (polled by the test, not the UI). */
async function stateOf(server, id) {
  const res = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query: `query($id: ID!) { trace(id: $id) { state } }`, variables: { id } }),
  });
  return (await res.json()).data?.trace?.state ?? null;
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

describe("a query's answer older than the live events shown", () => {
  let server;
  let browser;
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  test("does not take the Traces screen back to an earlier state", { timeout: 60_000 }, async () => {
    const files = traceFiles(ID, 2);
    await writeTraceFile(server.bucket, ID, ...files[0]);
    for (const deadline = Date.now() + 20_000; (await stateOf(server, ID)) !== "UPLOADING"; ) {
      assert.ok(Date.now() < deadline, "the server did not list the trace");
      await new Promise((r) => setTimeout(r, 50));
    }

    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    // The Traces screen's second query (the one a second after subscribing) is answered by the
    // server at once, while the trace is uploading, and handed to the page only when the test
    // says, with totalCount changed so the test can see when the page has taken it.
    let traceQueries = 0;
    const fetched = deferred();
    const release = deferred();
    await page.route((url) => url.pathname === "/graphql", async (route) => {
      const req = route.request();
      // urql sends a query that fits in a URL as a GET.
      const op = (req.method() === "GET" ? new URL(req.url()).searchParams.get("query") : req.postData()) ?? "";
      if (!op.includes("query Traces(") || ++traceQueries !== 2) {
        return route.continue();
      }
      const response = await route.fetch();
      const json = await response.json();
      fetched.resolve(json);
      await release.promise;
      json.data.traces.totalCount = 1000;
      await route.fulfill({ response, json });
    });
    await page.goto(server.url + "/");
    await page.locator('[data-connection="connected"]').waitFor();
    const row = page.locator(`tr[data-trace-id="${ID}"]`);
    await row.locator('[data-state="UPLOADING"]').waitFor();

    const snapshot = await fetched.promise;
    const held = snapshot.data.traces.nodes.find((t) => t.id === ID);
    assert.equal(held?.state, "UPLOADING", "the held answer should show the trace uploading");

    for (const f of files.slice(1)) await writeTraceFile(server.bucket, ID, ...f);
    await row.locator('[data-state="READY"]').waitFor();

    release.resolve();
    await page.getByText("1,000 traces").waitFor();
    assert.equal(await row.getAttribute("data-trace-id"), ID);
    assert.equal(await row.locator("[data-state]").getAttribute("data-state"), "READY", "the older answer undid the READY event");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
