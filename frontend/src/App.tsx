import { BuildFooter } from "./components/BuildFooter";
import { ConnectionBanner } from "./components/ConnectionBanner";
import { ExecutorBanner } from "./components/ExecutorBanner";
import { ComparePage } from "./compare/ComparePage";
import { Link, matchRoute, useLocation } from "./router";
import { TracePage } from "./traces/TracePage";
import { TracesScreen } from "./traces/TracesScreen";
import { NewRunPage } from "./runs/NewRunPage";
import { RunPage } from "./runs/RunPage";
import { RunsScreen } from "./runs/RunsScreen";
import { NewSweepPage } from "./sweeps/NewSweepPage";
import { SweepPage } from "./sweeps/SweepPage";
import { SamplingPage } from "./sampling/SamplingPage";

export function App() {
  const { pathname } = useLocation();
  const route = matchRoute(pathname);
  return (
    <>
      <a href="#main" className="skip">Skip to content</a>
      <header className="top">
        <span className="brand">Cascade</span>
        <nav aria-label="Main">
          <Link href="/" aria-current={route.name === "traces" || route.name === "trace" || route.name === "compare" || route.name === "sample" || route.name === "newRun" ? "page" : undefined}>
            Traces
          </Link>
          <Link href="/runs" aria-current={route.name === "runs" || route.name === "run" || route.name === "sweep" || route.name === "newSweep" ? "page" : undefined}>
            Runs
          </Link>
          <a href="/playground">Playground</a>
        </nav>
        <ConnectionBanner />
      </header>
      <main id="main">
        <ExecutorBanner />
        {route.name === "traces" && <TracesScreen />}
        {route.name === "trace" && <TracePage key={route.id} id={route.id} />}
        {route.name === "runs" && <RunsScreen />}
        {route.name === "run" && <RunPage key={route.id} id={route.id} />}
        {route.name === "sweep" && <SweepPage key={route.id} id={route.id} />}
        {route.name === "newSweep" && <NewSweepPage />}
        {route.name === "compare" && <ComparePage key={route.traceId} id={route.traceId} />}
        {route.name === "sample" && <SamplingPage key={route.traceId} traceId={route.traceId} />}
        {route.name === "newRun" && <NewRunPage key={route.traceId} traceId={route.traceId} />}
        {route.name === "notFound" && (
          <section>
            <h1>Not found</h1>
            <p>
              Nothing lives at <code>{pathname}</code>. <Link href="/">Go to traces</Link>
            </p>
          </section>
        )}
      </main>
      <BuildFooter />
    </>
  );
}
