import { useQuery } from "urql";
import { ConfigModifiersQuery } from "./documents";
import { parseValues } from "./design";

/** An axis being written: an option and its values as typed, or modifiers picked (option null). */
export interface AxisDraft {
  option: string | null;
  text: string;
  modifiers: readonly string[];
}

/** The axes as launchSweep takes them. */
export function axesInput(drafts: readonly AxisDraft[]): { option: string | null; values: string[] }[] {
  return drafts.map((d) => (d.option == null ? { option: null, values: [...d.modifiers] } : { option: d.option.trim(), values: parseValues(d.text) }));
}

/**
 * A design sweep's axes: each an option (with its dash) and comma-separated values, or a set
 * of modifiers of define-standard-cfgs.yml ("none" the base as it is).
 */
export function AxesEditor({ axes, onChange }: { axes: readonly AxisDraft[]; onChange: (axes: AxisDraft[]) => void }) {
  const [{ data }] = useQuery({ query: ConfigModifiersQuery });
  const mods = (data?.configModifiers.modifiers ?? []).filter((m) => !m.error);
  const set = (i: number, a: Partial<AxisDraft>) => onChange(axes.map((d, k) => (k === i ? { ...d, ...a } : d)));
  return (
    <fieldset className="form-row" style={{ maxWidth: 760, border: 0, padding: 0 }} aria-label="Axes">
      <legend>
        Parameter axes <span className="hint">— optional: each cell of the grid is a variant of each config</span>
      </legend>
      {axes.map((a, i) => (
        <div key={i} className="axis" data-testid={`axis-${i}`}>
          {a.option != null ? (
            <>
              <label>
                Option{" "}
                <input aria-label={`Axis ${i + 1} option`} className="mono" placeholder="-gpgpu_n_clusters" value={a.option}
                  onChange={(e) => set(i, { option: e.target.value })} />
              </label>{" "}
              <label>
                Values{" "}
                <input aria-label={`Axis ${i + 1} values`} className="mono" placeholder="20, 40, 80" value={a.text}
                  onChange={(e) => set(i, { text: e.target.value })} />
              </label>
            </>
          ) : (
            <span role="group" aria-label={`Axis ${i + 1} modifiers`}>
              Modifiers:{" "}
              {["", ...mods.map((m) => m.name)].map((m) => (
                <label key={m} className="check" title={mods.find((x) => x.name === m)?.params.map((p) => `${p.option} ${p.value}`).join(" ")}>
                  <input type="checkbox" checked={a.modifiers.includes(m)}
                    onChange={(e) => set(i, { modifiers: e.target.checked ? [...a.modifiers, m] : a.modifiers.filter((x) => x !== m) })} />
                  {m || "none"}{" "}
                </label>
              ))}
              {mods.length === 0 && <span className="hint">(no modifiers file: {data?.configModifiers.file ?? "none read"})</span>}
            </span>
          )}{" "}
          <button type="button" onClick={() => onChange(axes.filter((_, k) => k !== i))}>Remove axis</button>
        </div>
      ))}
      <p>
        <button type="button" onClick={() => onChange([...axes, { option: "", text: "", modifiers: [] }])}>Add parameter axis</button>{" "}
        <button type="button" onClick={() => onChange([...axes, { option: null, text: "", modifiers: [""] }])}>Add modifier axis</button>
      </p>
    </fieldset>
  );
}
