// Opens the Traces screen of a running Cascade in headless Chromium and waits until it
// shows the trace with the given id (in the given state, if one is given), then prints
// that row's text. It exits 1, saying what it saw, when the trace does not show in time.
// The README's quickstart test (cmd/cascade/quickstart_test.go) runs it as a user looks.
//   node e2e/see-trace.mjs http://127.0.0.1:8080 sample READY
import { launchBrowser, watchErrors } from "./harness.mjs";

const [url, id, state] = process.argv.slice(2);
if (!url || !id) {
  console.error("usage: node e2e/see-trace.mjs URL TRACE_ID [STATE]");
  process.exit(2);
}
const browser = await launchBrowser();
let code = 0;
try {
  const page = await browser.context.newPage();
  const errors = watchErrors(page);
  await page.goto(url + "/");
  await page.getByRole("heading", { name: "Traces" }).waitFor();
  const row = page.locator(`tr[data-trace-id="${id}"]` + (state ? `[data-state="${state}"]` : ""));
  try {
    await row.waitFor();
  } catch (e) {
    const body = await page.locator("body").innerText().catch(() => "(no body)");
    throw new Error(`${e.message}\nthe page shows:\n${body}`);
  }
  console.log((await row.innerText()).replace(/\s+/g, " ").trim());
  if (errors.length > 0) throw new Error(`the page logged errors:\n${errors.join("\n")}`);
} catch (e) {
  console.error(`see-trace: ${id}${state ? " " + state : ""} on ${url}: ${e.message}`);
  code = 1;
} finally {
  await browser.close();
}
process.exit(code);
