import { graphql } from "../gql";

export const ConfigComparisonRowFragment = graphql(`
  fragment ConfigComparisonRow on ConfigComparison {
    simConfig
    run {
      id
      state
      statCounters { name unit kind }
      statTotals
      figures { coreClockMHz }
    }
    sampled
    runs
    succeeded
    failed
    cancelled
    running
    queued
    comparison { kernelsCompared mape correlation simTotalNs measuredTotalNs }
  }
`);

export const CompareConfigsQuery = graphql(`
  query CompareConfigs($id: ID!) {
    trace(id: $id) {
      id
      model
      hasRealTiming
      configComparison { ...ConfigComparisonRow }
    }
  }
`);

export const CompareKernelsQuery = graphql(`
  query CompareKernels($id: ID!, $first: Int, $after: String) {
    trace(id: $id) {
      id
      configComparisonKernels(first: $first, after: $after) {
        simConfigs
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { kernelId context name displayName errors cycles }
      }
    }
  }
`);

/** The configs a trace has runs on, for the link to its Compare configs page. */
export const TraceConfigsQuery = graphql(`
  query TraceConfigs($id: ID!) {
    trace(id: $id) { id configComparison { simConfig } }
  }
`);

export const TraceRunStateSubscription = graphql(`
  subscription TraceRunState($traceId: ID) {
    runUpdated(traceId: $traceId) { id state }
  }
`);

export const SweepGridQuery = graphql(`
  query SweepGrid($id: ID!) {
    sweep(id: $id) {
      id
      traceIds
      simConfigs
      grid {
        traceId
        simConfig
        run { id state }
        runs
        succeeded
        comparison { kernelsCompared mape correlation simTotalNs measuredTotalNs }
      }
    }
  }
`);

export const SweepRunStateSubscription = graphql(`
  subscription SweepRunState($id: ID!) {
    sweepUpdated(id: $id) { run { id state } }
  }
`);
