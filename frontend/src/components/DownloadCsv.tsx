import { useState } from "react";
import { auth } from "../api/auth";

/**
 * A button that downloads a CSV the server makes (GET url) as filename, with the API's token:
 * a plain link could not send it.
 */
export function DownloadCsv({ url, filename, label = "Download CSV" }: { url: string; filename: string; label?: string }) {
  const [state, setState] = useState<{ busy: boolean; error: string | null }>({ busy: false, error: null });
  const download = async () => {
    setState({ busy: true, error: null });
    try {
      const r = await fetch(url, { headers: auth.headers() });
      if (!r.ok) throw new Error((await r.text()).trim() || r.statusText);
      const href = URL.createObjectURL(await r.blob());
      const a = document.createElement("a");
      a.href = href;
      a.download = filename;
      a.click();
      setTimeout(() => URL.revokeObjectURL(href), 10_000);
      setState({ busy: false, error: null });
    } catch (e) {
      setState({ busy: false, error: e instanceof Error ? e.message : String(e) });
    }
  };
  return (
    <>
      <button type="button" onClick={() => void download()} disabled={state.busy}>
        {state.busy ? "Preparing CSV…" : label}
      </button>
      {state.error && (
        <span role="alert" className="error">
          {" "}
          Download failed: {state.error}
        </span>
      )}
    </>
  );
}
