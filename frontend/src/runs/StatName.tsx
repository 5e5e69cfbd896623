import { Fragment } from "react";

/**
 * A statistic's name in a narrow column header: it may break after each underscore and nowhere
 * else ("L2_READ_HIT_RATE" on two lines reads "L2_READ_HIT_" "RATE", not "L2_READ_HIT_RAT" "E").
 */
export function StatName({ name }: { name: string }) {
  const parts = name.split("_");
  return (
    <span className="statname">
      {parts.map((p, i) => (
        <Fragment key={i}>
          {p}
          {i < parts.length - 1 && (
            <>
              _<wbr />
            </>
          )}
        </Fragment>
      ))}
    </span>
  );
}
