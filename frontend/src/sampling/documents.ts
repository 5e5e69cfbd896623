import { graphql } from "../gql";

export const SamplingPlanSummaryFragment = graphql(`
  fragment SamplingPlanSummary on SamplingPlan {
    id
    method
    basis
    targetError
    targetInstructions
    errorBound
    warmup
    warmupStep
    samples
    simulatedFraction
    expectedError
    createdAt
    untraced { count note }
  }
`);

export const SamplingPlanDetailFragment = graphql(`
  fragment SamplingPlanDetail on SamplingPlan {
    ...SamplingPlanSummary
    launches
    untimedLaunches
    instructions
    simulatedLaunches
    simulatedInstructions
    total
    estimate
    ciLow
    ciHigh
    untraced {
      count
      note
      launches { launch kernelId context }
      ranges { context start end }
    }
    strata {
      name
      displayName
      grid { x y z }
      block { x y z }
      size
      meanDurationNs
      cvDuration
      meanInstructions
      cvInstructions
      why
      allocation
      cost
      varianceShare
      representatives {
        launch
        kernelId
        context
        weight
        durationNs
        instructions
        warmup { launch kernelId }
      }
    }
  }
`);

export const SamplingPageQuery = graphql(`
  query SamplingPage($id: ID!) {
    trace(id: $id) {
      id
      state
      sample
      model
      kernelCount
      hasRealTiming
      traceGpuArch
      suggestedSimConfig
      defaultSimConfig { name }
      compatibleSimConfigs { name }
      simulatable
      notSimulatableReason
      samplingPlans { ...SamplingPlanSummary }
    }
    simConfigs { name computeCapability coreClockMHz l2Bytes error checked }
  }
`);

export const SamplingPlanQuery = graphql(`
  query SamplingPlan($id: ID!) {
    samplingPlan(id: $id) { ...SamplingPlanDetail }
  }
`);

export const SamplingTraceListQuery = graphql(`
  query SamplingTraceList($id: ID!, $simConfig: String, $warming: Boolean) {
    samplingPlan(id: $id) { id traceList(simConfig: $simConfig, warming: $warming) }
  }
`);

export const PlanSamplingMutation = graphql(`
  mutation PlanSampling($traceId: ID!, $method: SamplingMethod, $target: SamplingTarget, $warmup: Int, $warmupStep: Boolean) {
    planSampling(traceId: $traceId, method: $method, target: $target, warmup: $warmup, warmupStep: $warmupStep) { ...SamplingPlanDetail }
  }
`);

export const SamplingWallEstimateQuery = graphql(`
  query SamplingWallEstimate($id: ID!, $config: String!) {
    samplingPlan(id: $id) {
      id
      wallEstimate(config: $config) {
        config
        runs
        instructionsPerSecond
        startupSeconds
        segments
        concurrency
        concurrencyNote
        seconds
        processSeconds
        fullSeconds
        measuredFullSeconds
        speedup
      }
    }
  }
`);

export const PlanFullRunsQuery = graphql(`
  query PlanFullRuns($traceId: ID!) {
    runs(traceId: $traceId, state: SUCCEEDED, first: 100) {
      nodes {
        id
        label
        kernelIds
        createdAt
        simConfig { name }
        figures { simCycles }
        sampling { representatives }
      }
    }
  }
`);

export const SamplingEvaluateQuery = graphql(`
  query SamplingEvaluate($id: ID!, $run: ID!) {
    samplingPlan(id: $id) {
      id
      evaluate(run: $run) {
        run { id }
        projectedCycles
        ciLowCycles
        ciHighCycles
        fullCycles
        error
        statedError
        inside
      }
    }
  }
`);
