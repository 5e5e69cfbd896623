import { useEffect, useRef, useState, type FormEvent } from "react";
import { auth as defaultStore, useAuth, type AuthStore } from "../api/auth";
import "./TokenDialog.css";

/**
 * Asks for the API token when the server refused a request for want of one, once per
 * session: the token is kept in sessionStorage and sent with every request after.
 */
export function TokenDialog({ store = defaultStore }: { store?: AuthStore }) {
  const { needed, reason } = useAuth(store);
  const [token, setToken] = useState("");
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    // Modal: the page behind it waits for the token.
    const d = dialog.current;
    if (!d || d.open) return;
    if (typeof d.showModal === "function") d.showModal();
    else d.setAttribute("open", "");
  }, [needed]);
  if (!needed) return null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!token.trim()) return;
    store.submit(token);
    setToken("");
  };
  return (
    <dialog ref={dialog} className="token-dialog" aria-labelledby="token-title" aria-describedby="token-help" onCancel={(e) => e.preventDefault()}>
      <form onSubmit={submit}>
        <h2 id="token-title">Access token needed</h2>
        <p id="token-help">
          This Cascade server needs a token. Ask whoever runs it for the read-write token (<code>CASCADE_TOKEN</code>) or
          the read-only one (<code>CASCADE_READONLY_TOKEN</code>). It is kept for this browser tab only.
        </p>
        {reason && (
          <p className="error" role="alert">
            The server said: {reason}
          </p>
        )}
        <label>
          Token{" "}
          <input type="password" autoComplete="current-password" autoFocus value={token} onChange={(e) => setToken(e.target.value)} />
        </label>
        <div className="token-actions">
          <button type="submit" className="primary" disabled={!token.trim()}>
            Continue
          </button>
        </div>
      </form>
    </dialog>
  );
}
