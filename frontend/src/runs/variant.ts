/** An override as the API takes it. */
export type Override = { option: string; value: string };

/**
 * Splits overrides text into words as the server reads a config file, a modifier's extra_params
 * and a variant's name (simconfig's tokenize): '#' to the end of its line is a comment, words are
 * separated by white space, and a value of several words is written in double quotes
 * ("lrr gto"), its words joined by one space. So a value the server writes in a variant's name
 * reads the same here.
 */
export function overrideWords(text: string): string[] {
  const words: string[] = [];
  let quoted: string[] | null = null;
  const unquote = (w: string) => w.replace(/^"+|"+$/g, "");
  for (const line of text.split("\n")) {
    for (const f of line.replace(/#.*/, "").split(/\s+/).filter(Boolean)) {
      if (quoted) {
        quoted.push(f);
        if (f.endsWith('"')) {
          words.push(unquote(quoted.join(" ")));
          quoted = null;
        }
      } else if (f.startsWith('"') && !(f.length > 1 && f.endsWith('"'))) {
        quoted = [f];
      } else {
        words.push(unquote(f));
      }
    }
  }
  if (quoted) words.push(unquote(quoted.join(" ")));
  return words;
}

/**
 * Reads overrides typed as the simulator takes them, "-option value" pairs separated by spaces
 * or new lines ("-gpgpu_n_clusters 64", '-gpgpu_scheduler "lrr gto"'); '#' starts a comment. It
 * says what is wrong with the first pair that is not one.
 */
export function parseOverrides(text: string): { overrides: Override[]; error: string | null } {
  const tokens = overrideWords(text);
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
