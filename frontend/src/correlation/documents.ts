import { graphql } from "../gql";

export const StatCorrelationFiguresFragment = graphql(`
  fragment StatCorrelationFigures on StatCorrelation {
    statistic
    unit
    kernels
    pearson
    mae
    mapePct
    aggregateErrorPct
    totalErrorPct
    nrmse
    within1Pct
    within10Pct
    over
    under
    simTotal
    measuredTotal
  }
`);

export const CounterPairFieldsFragment = graphql(`
  fragment CounterPairFields on CounterPair {
    seq
    kernelId
    context
    name
    displayName
    simulated
    measured
    measuredMin
    measuredMax
    measurements
    errorPct
    representative
  }
`);

/** A run's statistics against the trace's hardware counters: the run page's Hardware counters. */
export const RunCorrelationQuery = graphql(`
  query RunCorrelation($id: ID!) {
    run(id: $id) {
      id
      state
      updatedAt
      trace { id updatedAt profiles { file profiler gpu matched error } }
      correlation {
        statistics {
          ...StatCorrelationFigures
          furthestOff { ...CounterPairFields }
        }
        gpuWarnings
      }
    }
  }
`);

/** A page of a run's pairs of one statistic: the scatter's points. */
export const CounterPairsQuery = graphql(`
  query CounterPairs($id: ID!, $statistic: String!, $first: Int, $after: String) {
    run(id: $id) {
      id
      counterPairs(statistic: $statistic, first: $first, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { ...CounterPairFields }
      }
    }
  }
`);

/** The trace's configs' runs against its hardware counters: the compare page's statistics × configs. */
export const TraceCorrelationQuery = graphql(`
  query TraceCorrelation($id: ID!) {
    trace(id: $id) {
      id
      updatedAt
      profiles { file matched error }
      configCorrelation {
        simConfigs
        runs { id state sampling { representatives } }
        statistics {
          statistic
          unit
          rankedBy
          best
          configs { ...StatCorrelationFigures }
        }
        best
        gpuWarnings
      }
    }
  }
`);

/** A trace's changes (a profile read again with an upload): its correlations change with it. */
export const TraceChangedSubscription = graphql(`
  subscription TraceChanged($id: ID) {
    traceUpdated(id: $id) { id updatedAt }
  }
`);
