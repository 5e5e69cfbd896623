import { graphql } from "../gql";

export const TraceSummaryFragment = graphql(`
  fragment TraceSummary on Trace {
    id
    state
    error
    model
    sourceGpu
    kernelCount
    bytes
    sample
    createdAt
    updatedAt
  }
`);

export const TracesQuery = graphql(`
  query Traces($state: TraceState, $search: String, $first: Int, $after: String) {
    traces(state: $state, search: $search, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { ...TraceSummary }
    }
  }
`);

export const TraceSummaryQuery = graphql(`
  query TraceSummary($id: ID!) {
    trace(id: $id) { ...TraceSummary }
  }
`);

export const TraceUpdatedSubscription = graphql(`
  subscription TraceUpdated($id: ID) {
    traceUpdated(id: $id) { ...TraceSummary }
  }
`);

export const TraceRemovedSubscription = graphql(`
  subscription TraceRemoved {
    traceRemoved
  }
`);

export const TraceDetailFragment = graphql(`
  fragment TraceDetail on Trace {
    ...TraceSummary
    layers
    prompts
    traceGpuArch
    traceGpuArchFrom
    retryable
    suggestedSimConfig
    hasRealTiming
    measuredTimesFrom
    profiles { file profiler gpu launches matched error }
    hasStepTimeline
    untracedKernels
    warnings
    postprocessLogTail(lines: 40)
  }
`);

export const TraceQuery = graphql(`
  query Trace($id: ID!) {
    trace(id: $id) {
      ...TraceDetail
      kernels(first: 0) { totalCount }
    }
  }
`);

export const TraceDetailUpdatedSubscription = graphql(`
  subscription TraceDetailUpdated($id: ID!) {
    traceUpdated(id: $id) { ...TraceDetail }
  }
`);

export const KernelsQuery = graphql(`
  query Kernels($id: ID!, $search: String, $first: Int!, $after: String) {
    trace(id: $id) {
      id
      kernels(search: $search, first: $first, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes {
          kernelId
          context
          name
          demangledName
          displayName
          traceFile
          grid { x y z }
          block { x y z }
          instructions
          traced
        }
      }
    }
  }
`);

export const KernelCountQuery = graphql(`
  query KernelCount($id: ID!, $search: String) {
    trace(id: $id) {
      id
      kernels(search: $search, first: 0) { totalCount }
    }
  }
`);

export const PostprocessLogSubscription = graphql(`
  subscription PostprocessLog($traceId: ID!) {
    postprocessLog(traceId: $traceId) { lines }
  }
`);

export const RetryTraceMutation = graphql(`
  mutation RetryTrace($id: ID!) {
    retryTrace(id: $id) { ...TraceDetail }
  }
`);

export const RemoveTraceMutation = graphql(`
  mutation RemoveTrace($id: ID!) {
    removeTrace(id: $id)
  }
`);
