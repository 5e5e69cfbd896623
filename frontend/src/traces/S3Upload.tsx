import { useQuery } from "urql";
import { graphql } from "../gql";
import { errorWithCode } from "../api/auth";

const S3EndpointQuery = graphql(`
  query S3Endpoint {
    s3Endpoint { url bucket prefix envCommand awsCommand rcloneCommand cascadeCommand }
  }
`);

/**
 * How to upload a trace to this server's S3 endpoint: the same ready-to-paste commands
 * `cascade serve` prints at start. Each uploads ./my-trace as the trace my-trace, data files
 * first and metadata.json last. Nothing is shown when the server runs without an endpoint, and
 * a note when the token is read-only (the server keeps the keys from it).
 */
export function S3Upload() {
  const [{ data, error }] = useQuery({ query: S3EndpointQuery });
  const e = data?.s3Endpoint;
  if (errorWithCode(error?.graphQLErrors, "FORBIDDEN")) {
    // A read-only token: the keys upload, so the server keeps them from it.
    return (
      <section className="s3-upload" aria-label="Upload a trace">
        <p className="muted">Uploading needs the read-write token: this one is read-only, so the S3 keys are not shown.</p>
      </section>
    );
  }
  if (!e) return null;
  return (
    <section className="s3-upload" aria-label="Upload a trace">
      <h2>Upload a trace</h2>
      <p className="muted">
        S3 endpoint <code>{e.url}</code>, bucket <code>{e.bucket}</code>, one directory per trace under{" "}
        <code>{e.prefix}/</code>. From the machine that holds <code>./my-trace</code>, with the AWS CLI:
      </p>
      <pre className="log" aria-label="AWS CLI">{`${e.envCommand}\n${e.awsCommand}`}</pre>
      <p className="muted">with rclone:</p>
      <pre className="log" aria-label="rclone">{e.rcloneCommand}</pre>
      <p className="muted">or with Cascade's own uploader (resumes an interrupted upload):</p>
      <pre className="log" aria-label="cascade upload">{`${e.envCommand}\n${e.cascadeCommand}`}</pre>
    </section>
  );
}
