// @vitest-environment jsdom
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/react";
import { StatName } from "./StatName";

afterEach(cleanup);

describe("StatName", () => {
  it("may break after each underscore, and nowhere else (the header no longer breaks anywhere: L2_READ_HIT_RAT E)", () => {
    const { container } = render(<StatName name="l2_read_hit_rate" />);
    expect(container.textContent).toBe("l2_read_hit_rate");
    expect(container.querySelectorAll("wbr").length).toBe(3);
    expect(container.innerHTML).toContain("l2_<wbr>read_<wbr>hit_<wbr>rate");
  });
});
