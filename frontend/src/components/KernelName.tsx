/**
 * A kernel's name as people read it (displayName: demangled, without parameters), with the
 * mangled name on hover and a button that copies it.
 */
export function KernelName({ name, displayName, demangledName, extraTitle }: {
  name: string;
  displayName: string;
  demangledName?: string | null;
  extraTitle?: string;
}) {
  const title = [name, demangledName && demangledName !== displayName ? demangledName : null, extraTitle]
    .filter(Boolean)
    .join("\n");
  // No state per row: a virtualised table re-renders its rows on every scroll frame.
  async function copy(e: React.MouseEvent<HTMLButtonElement>) {
    const button = e.currentTarget;
    try {
      await navigator.clipboard.writeText(name);
      button.textContent = "✓";
      setTimeout(() => (button.textContent = "⧉"), 1500);
    } catch {
      button.title = "The browser did not allow copying; select the name in the tooltip instead";
    }
  }
  return (
    <span className="kname-cell">
      <span className="mono kname" title={title} data-mangled={name}>
        {displayName}
      </span>
      <button type="button" className="copy" onClick={copy} aria-label={`Copy mangled name ${name}`} title="Copy the mangled name">
        ⧉
      </button>
    </span>
  );
}

/** Whether a kernel's mangled, demangled or shown name holds the text, case-insensitively. */
export function kernelMatches(
  k: { name: string; displayName: string; demangledName?: string | null },
  text: string,
): boolean {
  const q = text.trim().toLowerCase();
  if (!q) return true;
  return [k.name, k.displayName, k.demangledName ?? ""].some((n) => n.toLowerCase().includes(q));
}
