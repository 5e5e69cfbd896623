// End-to-end for a narrow window (800 px): the Traces screen, the Runs screen and a trace's
// compare page never scroll sideways as a whole; a table wider than the window scrolls inside
// its own box (.ktable-wrap), its header with its rows.
//   CASCADE_BIN=/path/to/cascade CASCADE_SIM_CMD=/path/to/fakesim node --test e2e/narrow.test.mjs
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { gql, launchBrowser, REPO, SIM_CONFIGS, screenshot, simSkip as skip, sleep, startServer, upload, waitReady, watchErrors } from "./harness.mjs";

const TRACE = "narrow-e2e";
const CONFIGS = ["SM90_H100", "SM86_RTX3070"];

async function succeeded(server, id) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
    const d = await gql(server, "query($id: ID!) { run(id: $id) { state error } }", { id });
    if (d.run.state === "SUCCEEDED") return;
    if (d.run.state === "FAILED" || d.run.state === "CANCELLED") throw new Error(`run ${id} ${d.run.state}: ${d.run.error}`);
  }
  throw new Error(`run ${id} did not succeed in 60 s`);
}

/**
 * How the page overflows sideways: the document's scroll and client widths, and the elements
 * that reach past the window, not inside a box that scrolls them.
 */
function overflow(page) {
  return page.evaluate(() => {
    const doc = document.scrollingElement;
    const past = [];
    for (const el of document.querySelectorAll("main *")) {
      if (el.getBoundingClientRect().right <= doc.clientWidth + 0.5) continue;
      let boxed = false;
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        if (getComputedStyle(p).overflowX !== "visible") boxed = true;
      }
      if (!boxed) past.push(`${el.tagName.toLowerCase()}.${[...el.classList].join(".")}${el.getAttribute("aria-label") ? `[${el.getAttribute("aria-label")}]` : ""}`);
    }
    return { scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth, past: [...new Set(past)].slice(0, 8) };
  });
}

/** Each table on the page whose columns need more room than its box: it scrolls in its wrapper, its header with it. */
function wideTables(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll("main table, main [role=table]")]
      .map((t) => {
        const wrap = t.parentElement;
        // Scrolled to its end, the wrapper moves a header cell as far as a body cell.
        const cells = [t.querySelector("thead th, [role=columnheader]"), t.querySelector("tbody td, [role=cell]")];
        const xs = () => cells.map((c) => c?.getBoundingClientRect().x);
        const [head0, body0] = xs();
        wrap.scrollLeft = wrap.scrollWidth;
        const [head1, body1] = xs();
        wrap.scrollLeft = 0;
        return {
          name: t.getAttribute("aria-label"),
          wide: t.getBoundingClientRect().width > wrap.clientWidth + 0.5,
          wrapped: wrap.classList.contains("ktable-wrap") && getComputedStyle(wrap).overflowX === "auto",
          headerMoves: head1 < head0 && head1 - head0 === body1 - body0,
        };
      })
      .filter((t) => t.wide),
  );
}

describe("a narrow window (800 px) against a real server", { skip }, () => {
  let server, browser;
  before(async () => {
    server = await startServer({ env: { CASCADE_SIM_CONFIGS_DIR: SIM_CONFIGS, CASCADE_RUN_CONCURRENCY: "2" } });
    browser = await launchBrowser();
    await upload(server, join(REPO, "samples", "quickstart"), TRACE);
    await waitReady(server, TRACE);
    for (const simConfig of CONFIGS) {
      const d = await gql(server, "mutation($in: LaunchRunInput!) { launchRun(input: $in) { id } }", { in: { traceId: TRACE, simConfig, rerun: true } });
      await succeeded(server, d.launchRun.id);
    }
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  test("the Traces, Runs and compare pages do not scroll sideways; their wide tables scroll in their own box", { timeout: 120_000 }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.setViewportSize({ width: 800, height: 900 });
    const pages = [
      ["traces", "/", () => page.getByRole("table", { name: "Traces" }).locator(`tr[data-trace-id="${TRACE}"]`).waitFor()],
      ["runs", "/runs", () => page.getByRole("table", { name: "Runs" }).locator('tr[data-state="SUCCEEDED"]').nth(1).waitFor()],
      [
        "compare",
        `/traces/${TRACE}/compare`,
        async () => {
          for (const c of CONFIGS) await page.getByTestId(`counts-${c}`).getByText("1 of 1 succeeded", { exact: true }).waitFor();
          await page.getByRole("table", { name: "Kernel errors per config" }).getByRole("row").nth(1).getByText(/%$/).first().waitFor();
        },
      ],
    ];
    // Every page is looked at before any assertion, so a failure names each page that overflows.
    const wrong = [];
    for (const [name, path, loaded] of pages) {
      await page.goto(`${server.url}${path}`);
      await loaded();
      const o = await overflow(page);
      if (o.scrollWidth > o.clientWidth) wrong.push(`${name} scrolls sideways: ${o.scrollWidth} > ${o.clientWidth}, past the window: ${o.past.join(", ")}`);
      for (const t of await wideTables(page)) {
        if (!t.wrapped) wrong.push(`${name}: the table ${t.name} is wider than its box and not in a .ktable-wrap that scrolls it`);
        else if (!t.headerMoves) wrong.push(`${name}: the table ${t.name} does not scroll in its box with its header`);
      }
      await screenshot(page, `95-narrow-${name}`);
    }
    assert.deepEqual(wrong, []);
    assert.deepEqual(errors, []);
  });
});
