// End-to-end: the Traces screen of a server with no uploads says how to upload over S3, and
// the AWS CLI lines it shows, pasted into a shell, bring a trace to READY on that screen.
//   CASCADE_BIN=/path/to/cascade npm run e2e        (the AWS CLI from scripts/deps.sh)
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { launchBrowser, screenshot, startServer, watchErrors } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const hasAWS = await promisify(execFile)("sh", ["-c", "command -v aws"]).then(
  () => true,
  () => false,
);

describe("uploading over S3 from the Traces screen", () => {
  let server;
  let browser;
  let work;
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
    work = await mkdtemp(join(tmpdir(), "cascade-s3-e2e-"));
  });
  after(async () => {
    await browser?.close();
    await server?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test("the empty Traces screen shows the S3 endpoint, and its AWS CLI lines upload a trace", { skip: !hasAWS && !process.env.CI && "the AWS CLI is not installed (scripts/deps.sh)" }, async () => {
    const page = await browser.context.newPage();
    const errors = watchErrors(page);
    await page.goto(server.url + "/");
    await page.getByRole("heading", { name: "Upload a trace" }).waitFor();
    const aws = await page.getByLabel("AWS CLI").innerText();
    assert.match(aws, /^export AWS_ACCESS_KEY_ID=\S+ AWS_SECRET_ACCESS_KEY=\S+ AWS_DEFAULT_REGION=us-east-1\naws --endpoint-url http:\/\/127\.0\.0\.1:\d+ s3 cp /);
    assert.match(await page.getByLabel("rclone").innerText(), /^rclone copy /);
    await screenshot(page, "10-traces-upload-over-s3");

    await cp(join(repo, "samples", "quickstart"), join(work, "my-trace"), { recursive: true });
    await promisify(execFile)("sh", ["-c", aws.replaceAll("\n", " && ")], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: work },
    });
    const row = page.locator('tr[data-trace-id="my-trace"]');
    await row.locator('[data-state="READY"]').waitFor();
    await page.getByRole("heading", { name: "Upload a trace" }).waitFor({ state: "detached" });
    await screenshot(page, "11-traces-uploaded-over-s3");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
