import { useCallback, useEffect, useRef, useState } from "react";

/**
 * Reads a query again when asked, once no read of it is in flight: urql gives every read of one
 * query in flight the same answer, which may have been read before what the new read is for
 * (a sampled run's check, computed when the run is read, once a full run has succeeded).
 * onAnswer is given the new answer, so the page can let it win over the last event of the
 * same version.
 */
export function useReadAgain<D>(
  data: D | undefined,
  fetching: boolean,
  refetch: (opts: { requestPolicy: "network-only" }) => void,
  onAnswer: (data: D) => void,
): () => void {
  const [wanted, setWanted] = useState(false);
  // The answer there was when the read was sent; undefined when none is awaited.
  const sentAt = useRef<{ data: D | undefined } | undefined>(undefined);
  const answer = useRef(onAnswer);
  answer.current = onAnswer;
  useEffect(() => {
    if (!wanted || fetching) return;
    setWanted(false);
    sentAt.current = { data };
    refetch({ requestPolicy: "network-only" });
  }, [wanted, fetching, data, refetch]);
  useEffect(() => {
    if (sentAt.current && data !== sentAt.current.data && data !== undefined) {
      sentAt.current = undefined;
      answer.current(data);
    }
  }, [data]);
  return useCallback(() => setWanted(true), []);
}
