/** The parts of api.md's SimConfig the New run screen decides with. */
export interface SimConfigLike {
  name: string;
  computeCapability: string;
  error?: string | null;
}

/** "sm_90" → "9.0"; "sm_120a" → "12.0"; null when it is not an sm_NN arch. */
export function archToComputeCapability(arch: string): string | null {
  const m = /^sm_(\d+)(\d)[a-z]?$/i.exec(arch.trim());
  return m ? `${Number(m[1])}.${m[2]}` : null;
}

/** A config is compatible with a trace when it is readable and has the trace's compute capability. */
export function isCompatible(c: SimConfigLike, traceGpuArch: string): boolean {
  if (c.error) return false;
  const cc = archToComputeCapability(traceGpuArch);
  return cc != null && c.computeCapability === cc;
}

/**
 * The guide's rule: the trace's suggested config if it is compatible, else the first compatible
 * config in the server's order; null when none is. A config with an error is never the default.
 */
export function pickDefaultConfig<C extends SimConfigLike>(
  configs: readonly C[],
  trace: { traceGpuArch: string; suggestedSimConfig?: string | null },
): C | null {
  const compatible = configs.filter((c) => isCompatible(c, trace.traceGpuArch));
  return compatible.find((c) => c.name === trace.suggestedSimConfig) ?? compatible[0] ?? null;
}

/** Why a trace cannot start a run, or null when it can. */
export function cannotLaunchReason(trace: {
  state: string;
  sample: boolean;
  notSimulatableReason?: string | null;
}): string | null {
  if (trace.sample) return "This is the sample trace: it has no instruction traces, so it cannot start a run.";
  if (trace.state !== "READY") return `Runs launch from ready traces; this one is ${trace.state.toLowerCase()}.`;
  if (trace.notSimulatableReason) return `The simulator cannot run this trace: ${trace.notSimulatableReason}.`;
  return null;
}
