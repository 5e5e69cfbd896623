import { graphql } from "../gql";

export const RunSummaryFragment = graphql(`
  fragment RunSummary on Run {
    id
    state
    label
    error
    failureClass
    createdAt
    updatedAt
    startedAt
    finishedAt
    simConfig { name }
    trace { id model }
    progress { kernelsDone kernelsTotal }
    sweep { id label }
    figures { wallSeconds simCycles }
    sampling { representatives }
    sampledBy { id }
  }
`);

export const RunKernelRowFragment = graphql(`
  fragment RunKernelRow on RunKernel {
    kernelId
    context
    name
    demangledName
    displayName
    launchUid
    simCycles
    simInstructions
    ipc
    simTimeNs
    measuredNs
    errorPct
    truncated
    statValues
    simulated
    projectedFrom
    fullCycles
    fullErrorPct
  }
`);

export const RunDetailFragment = graphql(`
  fragment RunDetail on Run {
    ...RunSummary
    executor
    slurm { jobId ref partition node state reason }
    crossArchitecture
    history
    failureLine
    sameAs { id }
    figures { coreClockMHz wallSeconds peakRssBytes simulatorBuild simulatorSum configSum traceSum traceCurrent }
    statCounters { name kind unit }
    statTotals
    timingProblems
    simConfig { name computeCapability coreClockMHz error base params { option value from } }
    trace { id model sourceGpu traceGpuArch hasRealTiming hasStepTimeline }
    comparison { kernelsCompared mape correlation simTotalNs measuredTotalNs }
    steps { step measuredNs projectedNs }
    sampling {
      plan { id method errorBound samples warmup warmupStep }
      segments { ...RunSummary }
      representatives
      simulatedLaunches
      simulatedInstructions
      simulatedFraction
      projectedCycles
      ciLowCycles
      ciHighCycles
      expectedError
      projectedNs
      simulatorSeconds
      fullRunSecondsEstimate
      validationRun { ...RunSummary }
      check {
        fullRun { id label state }
        fullCycles
        totalErrorPct
        beyondLatencyErrorPct
        launchLatencyCycles
        insideInterval
        kernelMape
        maxKernelErrorPct
        kernelsCompared
        measuredMape
        fullMeasuredMape
      }
    }
    split {
      segments { ...RunSummary }
      segmentStarts
      launches
      warmup
      period
      simulatorSeconds
    }
    sampledBy { id label state split { launches } }
  }
`);

export const RunsQuery = graphql(`
  query Runs($traceId: ID, $state: RunState, $failureClass: FailureClass, $first: Int) {
    runs(traceId: $traceId, state: $state, failureClass: $failureClass, first: $first) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { ...RunSummary }
    }
  }
`);

export const RunUpdatedSubscription = graphql(`
  subscription RunUpdated($traceId: ID) {
    runUpdated(traceId: $traceId) { ...RunSummary }
  }
`);

export const RunRemovedSubscription = graphql(`
  subscription RunRemoved($id: ID, $traceId: ID) {
    runRemoved(id: $id, traceId: $traceId)
  }
`);

export const RunQuery = graphql(`
  query Run($id: ID!) {
    run(id: $id) {
      ...RunDetail
      # The kernel subset, which never changes: in the query only, not in every runUpdated.
      kernelIds
      kernelContexts
      logTail(lines: 200)
      statKernels
    }
  }
`);

/** A page of a run's kernels, in launch order: the run page reads them as its table scrolls. */
export const RunKernelPageQuery = graphql(`
  query RunKernelPage($id: ID!, $first: Int, $after: String) {
    run(id: $id) {
      id
      kernelPage(first: $first, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { ...RunKernelRow }
      }
    }
  }
`);

export const RunDetailUpdatedSubscription = graphql(`
  subscription RunDetailUpdated($id: ID!) {
    runUpdated(id: $id) { ...RunDetail }
  }
`);

export const RunLogSubscription = graphql(`
  subscription RunLog($id: ID!) {
    runLog(id: $id) { lines }
  }
`);

export const CancelRunMutation = graphql(`
  mutation CancelRun($id: ID!) {
    cancelRun(id: $id) { ...RunSummary }
  }
`);

export const NewRunQuery = graphql(`
  query NewRun($id: ID!) {
    trace(id: $id) {
      id
      state
      sample
      model
      traceGpuArch
      suggestedSimConfig
      kernelCount
      defaultSimConfig { name }
      compatibleSimConfigs { name }
      simulatable
      notSimulatableReason
    }
    simConfigs { name computeCapability coreClockMHz error checked }
  }
`);

export const ConfigModifiersQuery = graphql(`
  query ConfigModifiers {
    configModifiers { file modifiers { name error params { option value } } }
  }
`);

export const SimConfigVariantQuery = graphql(`
  query SimConfigVariant($name: String!, $params: [SimParamInput!]) {
    simConfigVariant(name: $name, params: $params) {
      name
      base
      coreClockMHz
      params { option value from }
    }
  }
`);

export const TraceSimulatableQuery = graphql(`
  query TraceSimulatable($id: ID!) {
    trace(id: $id) { id notSimulatableReason }
    simConfigs { name checked }
  }
`);

export const SimConfigsCheckedSubscription = graphql(`
  subscription SimConfigsChecked {
    simConfigsChecked
  }
`);

export const LaunchRunMutation = graphql(`
  mutation LaunchRun($input: LaunchRunInput!) {
    launchRun(input: $input) { ...RunSummary }
  }
`);
