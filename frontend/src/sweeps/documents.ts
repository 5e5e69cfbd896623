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
    axes { option values }
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
      removedRunId
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
      removedRunId
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

export const DesignSpaceFragment = graphql(`
  fragment DesignSpaceFields on DesignSpace {
    axes { option values }
    baseline
    cells {
      simConfig base values shipped runs succeeded timed cycles timeNs speedup sampled
      timeLowNs timeHighNs speedupLow speedupHigh paired significant fullTimeNs fullSpeedup speedupErrorPct energyJ avgPowerW instsPerJoule
    }
    kernels { name timeNs }
    steps { traceId step measuredNs timeNs }
  }
`);

export const SweepDesignQuery = graphql(`
  query SweepDesign($id: ID!) {
    sweep(id: $id) {
      id
      designSpace { ...DesignSpaceFields }
    }
  }
`);

/** sweepUpdated for a sweep's design space: it comes with the first message and each run that succeeded. */
export const SweepDesignUpdatedSubscription = graphql(`
  subscription SweepDesignUpdated($id: ID!) {
    sweepUpdated(id: $id) {
      sweep { id progress { updatedAt } }
      designSpace { ...DesignSpaceFields }
    }
  }
`);

export const ConfigModifiersQuery = graphql(`
  query ConfigModifiers {
    configModifiers {
      file
      modifiers { name error params { option value } }
    }
  }
`);
