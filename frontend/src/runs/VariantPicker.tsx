import { useEffect, useState } from "react";
import { useQuery } from "urql";
import { ConfigModifiersQuery, SimConfigVariantQuery } from "./documents";
import { parseOverrides, variantName, type Override } from "./variant";

/** What the picker hands the launch: the name to launch and its direct overrides. */
export type Variant = {
  name: string;
  params: Override[];
  /** Null when the simulator took the variant (or there is nothing to check); else why not. */
  problem: string | null;
  /** True while the server is asked. */
  checking: boolean;
};

/**
 * Picks a variant of the chosen tested config: modifiers of define-standard-cfgs.yml (as
 * Accel-Sim's launcher composes them, "SM7_QV100-64SM") and overrides typed directly. Every
 * change is asked of the server (simConfigVariant), which has the simulator check the options:
 * the canonical name, the overrides in the order the simulator gets them, the core clock, or
 * the simulator's refusal, shown before anything is launched.
 */
export function VariantPicker({ base, onChange }: { base: string; onChange: (v: Variant) => void }) {
  const [{ data: mods }] = useQuery({ query: ConfigModifiersQuery });
  const [chosen, setChosen] = useState<string[]>([]);
  const [text, setText] = useState("");
  const parsed = parseOverrides(text);
  const name = variantName(base, chosen);
  const isVariant = chosen.length > 0 || parsed.overrides.length > 0;
  // The server is asked once typing pauses.
  const [asked, setAsked] = useState<{ name: string; params: Override[] } | null>(null);
  useEffect(() => {
    if (!isVariant || parsed.error) {
      setAsked(null);
      return;
    }
    const t = setTimeout(() => setAsked({ name, params: parsed.overrides }), 300);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [name, text]);
  const [{ data, error, fetching }] = useQuery({
    query: SimConfigVariantQuery,
    variables: asked ?? { name: base, params: [] },
    pause: asked == null,
    requestPolicy: "network-only",
  });
  const settled = asked != null && asked.name === name && !fetching;
  const problem = parsed.error ?? (settled && error ? (error.graphQLErrors[0]?.message ?? error.message) : null);
  const checking = isVariant && !parsed.error && !settled;
  useEffect(() => {
    onChange({ name, params: parsed.overrides, problem, checking });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [name, text, problem, checking]);

  const usable = mods?.configModifiers.modifiers.filter((m) => !m.error && m.params.length > 0) ?? [];
  const v = settled && !error ? data?.simConfigVariant : null;
  return (
    <fieldset className="form-row variant" style={{ maxWidth: 760, border: 0, padding: 0 }} data-testid="variant-picker">
      <legend>
        Variant <span className="hint">— optional: change {base}'s parameters</span>
      </legend>
      {usable.length > 0 && (
        <details>
          <summary>
            Modifiers{chosen.length > 0 ? `: ${chosen.join(", ")}` : ""}{" "}
            <span className="hint">from {mods?.configModifiers.file}</span>
          </summary>
          <ul className="modifiers">
            {usable.map((m) => (
              <li key={m.name}>
                <label>
                  <input
                    type="checkbox"
                    checked={chosen.includes(m.name)}
                    onChange={(e) =>
                      setChosen((c) => (e.target.checked ? [...c, m.name] : c.filter((x) => x !== m.name)))
                    }
                    data-testid={`modifier-${m.name}`}
                  />
                  <span className="mono">{m.name}</span>{" "}
                  <span className="hint mono">{m.params.map((p) => `${p.option} ${p.value}`).join(" ")}</span>
                </label>
              </li>
            ))}
          </ul>
        </details>
      )}
      <label htmlFor="overrides">Overrides</label>
      <textarea
        id="overrides"
        rows={2}
        className="mono"
        placeholder="-gpgpu_n_clusters 64"
        value={text}
        onChange={(e) => setText(e.target.value)}
        aria-invalid={problem ? true : undefined}
        aria-describedby="variant-status"
      />
      <p id="variant-status" role="status" className={problem ? "error" : "hint"} data-testid="variant-status">
        {!isVariant
          ? `${base} as shipped.`
          : problem
            ? `✕ ${problem}`
            : checking
              ? "Asking the simulator…"
              : v
                ? `✓ ${v.name}: ${v.params.map((p) => `${p.option} ${p.value}${p.from ? ` (${p.from})` : ""}`).join(", ")}${v.coreClockMHz ? ` · core clock ${v.coreClockMHz} MHz` : ""}`
                : ""}
      </p>
    </fieldset>
  );
}
