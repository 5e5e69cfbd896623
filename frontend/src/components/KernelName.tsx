const COPY_TITLE = "Copy the mangled name";

// Icons drawn here rather than characters: a symbol like ⧉ is missing from many fonts (it
// showed as an empty box), while a path draws the same everywhere, in the text's colour.
function CopyIcon() {
  return (
    <svg data-icon="copy" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path d="M5.5 2.5h6a2 2 0 0 1 2 2v6" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" />
      <path d="M4 5.5h5a1.5 1.5 0 0 1 1.5 1.5v5A1.5 1.5 0 0 1 9 13.5H4A1.5 1.5 0 0 1 2.5 12V7A1.5 1.5 0 0 1 4 5.5z" fill="none" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  );
}

function CopiedIcon() {
  return (
    <svg data-icon="copied" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path d="M3 8.5l3 3 7-7" fill="none" stroke="currentColor" strokeWidth="1.75" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}

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
  // No state per row: a virtualised table re-renders its rows on every scroll frame. The
  // button says "copied" for a moment through an attribute, which its CSS shows as a tick.
  async function copy(e: React.MouseEvent<HTMLButtonElement>) {
    const button = e.currentTarget;
    try {
      await navigator.clipboard.writeText(name);
      button.dataset.copied = "yes";
      button.title = "Copied";
      setTimeout(() => {
        delete button.dataset.copied;
        button.title = COPY_TITLE;
      }, 1500);
    } catch {
      button.title = "The browser did not allow copying; select the name in the tooltip instead";
    }
  }
  return (
    <span className="kname-cell">
      <span className="mono kname" title={title} data-mangled={name}>
        {displayName}
      </span>
      <button type="button" className="copy" onClick={copy} aria-label={`Copy mangled name ${name}`} title={COPY_TITLE}>
        <CopyIcon />
        <CopiedIcon />
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
