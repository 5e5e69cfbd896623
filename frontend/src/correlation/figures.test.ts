import { expect, test } from "vitest";
import { formatNrmse, formatPearson, formatRanked, rankedFigure } from "./figures";

test("the ranked figure is MAPE or NRMSE as rankedBy says", () => {
  const s = { pearson: 0.98765, mapePct: 12.34, nrmse: 0.4567 };
  expect(rankedFigure(s, "MAPE")).toBe(12.34);
  expect(rankedFigure(s, "NRMSE")).toBe(0.4567);
  expect(rankedFigure(null, "MAPE")).toBeNull();
  expect(formatRanked(s, "MAPE")).toBe("12.3 %");
  expect(formatRanked(s, "NRMSE")).toBe("0.457");
  expect(formatRanked({ mapePct: null }, "MAPE")).toBe("—");
  expect(formatPearson(s.pearson)).toBe("0.988");
  expect(formatPearson(null)).toBe("—");
  expect(formatNrmse(undefined)).toBe("—");
});
