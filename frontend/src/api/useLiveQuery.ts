import { useEffect, useRef } from "react";
import { useQuery, type AnyVariables, type UseQueryArgs, type UseQueryResponse } from "urql";
import { useConnection } from "./connection";

/**
 * useQuery that re-runs against the network whenever the websocket reconnects, so whatever
 * changed while live updates were cut off is fetched again. It never polls.
 */
export function useLiveQuery<Data, Variables extends AnyVariables>(
  args: UseQueryArgs<Variables, Data>,
): UseQueryResponse<Data, Variables> {
  const response = useQuery<Data, Variables>(args);
  const { epoch } = useConnection();
  const seen = useRef(epoch);
  const reexecute = response[1];
  useEffect(() => {
    if (epoch === seen.current) return;
    seen.current = epoch;
    if (!args.pause) reexecute({ requestPolicy: "network-only" });
  }, [epoch, reexecute, args.pause]);
  return response;
}
