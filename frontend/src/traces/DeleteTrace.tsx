import { useMutation } from "urql";
import { ConfirmButton } from "../components/ConfirmButton";
import { navigate } from "../router";
import { RemoveTraceMutation } from "./documents";

/**
 * Delete, on a trace's page: asks first, then removes the trace's directory from the bucket
 * (removeTrace) and goes back to the traces list. The sample trace ships with Cascade and has none.
 */
export function DeleteTrace({ id }: { id: string }) {
  const [{ fetching, error }, remove] = useMutation(RemoveTraceMutation);
  const confirm = async () => {
    const r = await remove({ id });
    if (!r.error) navigate("/");
  };
  return (
    <>
      <ConfirmButton
        label="Delete"
        busyLabel="Deleting…"
        busy={fetching}
        question="Delete this trace?"
        detail="Its files leave the bucket, and its runs go with it (a running one is stopped), results and all. This cannot be undone: only uploading it again brings the trace back."
        confirmLabel="Yes, delete trace"
        keepLabel="Keep the trace"
        onConfirm={() => void confirm()}
      />
      {error && (
        <span role="alert" className="error">
          Delete failed: {error.graphQLErrors[0]?.message ?? error.message}
        </span>
      )}
    </>
  );
}
