/** An override as the API takes it. */
export type Override = { option: string; value: string };

/**
 * Reads overrides typed as the simulator takes them, "-option value" pairs separated by spaces
 * or new lines ("-gpgpu_n_clusters 64"); '#' starts a comment. It says what is wrong with the
 * first pair that is not one.
 */
export function parseOverrides(text: string): { overrides: Override[]; error: string | null } {
  const tokens = text
    .split("\n")
    .map((l) => l.replace(/#.*/, ""))
    .join(" ")
    .split(/\s+/)
    .filter(Boolean);
  const overrides: Override[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < tokens.length; i += 2) {
    const option = tokens[i];
    if (!/^-[A-Za-z0-9_]+$/.test(option)) {
      return { overrides, error: `"${option}" is not an option: options start with '-' ("-gpgpu_n_clusters")` };
    }
    if (i + 1 >= tokens.length) return { overrides, error: `${option} has no value` };
    if (seen.has(option)) return { overrides, error: `${option} is given twice` };
    seen.add(option);
    overrides.push({ option, value: tokens[i + 1] });
  }
  return { overrides, error: null };
}

/** A variant's name as Accel-Sim's launcher writes it: the base and its modifiers joined by hyphens. */
export function variantName(base: string, modifiers: readonly string[]): string {
  return [base, ...modifiers].join("-");
}
