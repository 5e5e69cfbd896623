import { useEffect, useId, useRef, useState, type ReactNode } from "react";

/**
 * A button for what cannot be undone (cancelling a run or a sweep). Its first click asks,
 * in place: the question (the group's name), what will happen, the action and a way back.
 * The way back has the focus, so Enter or a second click on the same spot does nothing
 * harmful; it and Escape put the button back, with the focus on it. Not window.confirm,
 * which stops the whole page and which a headless browser answers by itself.
 */
export function ConfirmButton({
  label,
  busyLabel,
  busy,
  question,
  detail,
  confirmLabel,
  keepLabel,
  onConfirm,
}: {
  label: string;
  busyLabel: string;
  busy: boolean;
  question: string;
  detail: ReactNode;
  confirmLabel: string;
  keepLabel: string;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const id = useId();
  const keep = useRef<HTMLButtonElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  // Where the focus goes once the question is gone: back to the button, when it was kept.
  const refocus = useRef(false);
  useEffect(() => {
    if (asking) keep.current?.focus();
    else if (refocus.current) {
      refocus.current = false;
      opener.current?.focus();
    }
  }, [asking]);

  if (!asking) {
    return (
      <button ref={opener} type="button" disabled={busy} onClick={() => setAsking(true)}>
        {busy ? busyLabel : label}
      </button>
    );
  }
  const back = () => {
    refocus.current = true;
    setAsking(false);
  };
  return (
    <span
      role="group"
      aria-labelledby={`${id}-q`}
      aria-describedby={`${id}-d`}
      className="confirm"
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.stopPropagation();
          back();
        }
      }}
    >
      <strong id={`${id}-q`}>{question}</strong>
      <span id={`${id}-d`} className="confirm-detail">
        {detail}
      </span>
      <button
        type="button"
        className="danger"
        onClick={() => {
          refocus.current = true;
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button ref={keep} type="button" onClick={back}>
        {keepLabel}
      </button>
    </span>
  );
}
