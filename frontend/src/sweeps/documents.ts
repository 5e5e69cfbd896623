import { graphql } from "../gql";

export const SweepSummaryFragment = graphql(`
  fragment SweepSummary on Sweep {
    id
    label
    runCount
    executor
    createdAt
    simConfigs
    traceIds
    progress { total done queued running succeeded failed cancelled updatedAt }
  }
`);

export const SweepsQuery = graphql(`
  query Sweeps($first: Int) {
    sweeps(first: $first) {
      pageInfo { hasNextPage }
      nodes { ...SweepSummary }
    }
  }
`);

export const ConfigComparisonFragment = graphql(`
  fragment ConfigComparison on SweepConfigComparison {
    simConfig
    runs
    succeeded
    compared
    kernelsCompared
    mape
    correlation
    stepsCompared
    stepMape
  }
`);

export const SweepQuery = graphql(`
  query Sweep($id: ID!, $first: Int) {
    sweep(id: $id) {
      ...SweepSummary
      comparison { ...ConfigComparison }
      runs(first: $first) {
        totalCount
        pageInfo { hasNextPage }
        nodes { ...RunSummary }
      }
    }
  }
`);

export const SweepUpdatedSubscription = graphql(`
  subscription SweepUpdated($id: ID!) {
    sweepUpdated(id: $id) {
      sweep { id progress { total done queued running succeeded failed cancelled updatedAt } }
      run { ...RunSummary }
    }
  }
`);

/**
 * sweepUpdated for a sweep's page: with the comparison per config, which comes with each run
 * that succeeded (the Sweeps list, which shows none, leaves it out).
 */
export const SweepPageUpdatedSubscription = graphql(`
  subscription SweepPageUpdated($id: ID!) {
    sweepUpdated(id: $id) {
      sweep { id progress { total done queued running succeeded failed cancelled updatedAt } }
      run { ...RunSummary }
      comparison { ...ConfigComparison }
    }
  }
`);

export const NewSweepQuery = graphql(`
  query NewSweep {
    traces(state: READY, first: 1000) {
      nodes { id model sample traceGpuArch kernelCount }
    }
    simConfigs { name computeCapability coreClockMHz error }
  }
`);

export const LaunchSweepMutation = graphql(`
  mutation LaunchSweep($input: LaunchSweepInput!) {
    launchSweep(input: $input) { ...SweepSummary }
  }
`);

export const CancelSweepMutation = graphql(`
  mutation CancelSweep($id: ID!) {
    cancelSweep(id: $id) { ...SweepSummary }
  }
`);
