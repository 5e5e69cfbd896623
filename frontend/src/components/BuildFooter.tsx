import { useQuery } from "urql";
import { graphql } from "../gql";

export const BuildQuery = graphql(`
  query Build {
    build { version commit date modified }
  }
`);

/** Names the server's build (version, commit, date), as cascade --version and /healthz do. */
export function BuildFooter() {
  const [{ data }] = useQuery({ query: BuildQuery });
  const b = data?.build;
  if (!b) return null;
  const parts = [b.commit ? `commit ${b.commit.slice(0, 12)}` : null, b.date ? b.date.slice(0, 10) : null, b.modified ? "modified" : null].filter(Boolean);
  return (
    <footer className="build muted" data-testid="build">
      Cascade {b.version}
      {parts.length > 0 && ` (${parts.join(", ")})`}
    </footer>
  );
}
