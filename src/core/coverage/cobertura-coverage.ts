/**
 * Line coverage from a Cobertura XML report (`coverage.xml` of coverage.py, `cobertura-coverage.xml` of
 * Istanbul, gcovr, most Java and .NET tools). The root `<coverage>` element carries the totals the Cobertura DTD
 * (coverage-04.dtd) requires: `lines-valid`, `lines-covered` and `line-rate`. The gate counts from the first two
 * and refuses a report whose `line-rate` disagrees with them.
 *
 * Parsed with fast-xml-parser: validated first (a malformed file is named as such, with its line), entities are
 * not expanded (no billion-laughs), and only the root's attributes are read — the packages below it are left
 * unparsed (`stopNodes`), so a huge report is not built into a tree.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { type CoverageParse, coverageFrom } from "./coverage-summary.js";

const COUNT = /^\d+$/;
const RATE = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

export function parseCobertura(text: string): CoverageParse {
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true) {
    return { problem: `Cobertura XML: malformed at line ${valid.err.line}: ${valid.err.msg.slice(0, 160)}` };
  }
  let root: unknown;
  try {
    const parser = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: "",
      parseAttributeValue: false,
      parseTagValue: false,
      processEntities: false,
      htmlEntities: false,
      ignoreDeclaration: true,
      ignorePiTags: true,
      stopNodes: ["coverage.packages", "coverage.sources"],
    });
    root = (parser.parse(text) as Record<string, unknown>).coverage;
  } catch (error) {
    return { problem: `Cobertura XML: could not be read (${(error as Error).message.slice(0, 160)})` };
  }
  if (root === null || typeof root !== "object" || Array.isArray(root))
    return { problem: "Cobertura XML: the root element is not a single `<coverage>`" };
  const attrs = root as Record<string, unknown>;
  const valid_ = attrs["lines-valid"];
  const covered_ = attrs["lines-covered"];
  if (
    typeof valid_ !== "string" ||
    typeof covered_ !== "string" ||
    !COUNT.test(valid_) ||
    !COUNT.test(covered_)
  ) {
    return {
      problem: "Cobertura XML: `<coverage>` lacks whole-number `lines-valid` and `lines-covered` attributes",
    };
  }
  const total = Number(valid_);
  const covered = Number(covered_);
  const rate = attrs["line-rate"];
  if (rate !== undefined) {
    if (typeof rate !== "string" || !RATE.test(rate) || Number(rate) > 1)
      return { problem: `Cobertura XML: \`line-rate\` is not a fraction between 0 and 1` };
    // Tools round the rate (coverage.py to 4 places, some to 2): a disagreement beyond that is a forged count.
    if (total > 0 && Math.abs(Number(rate) - covered / total) > 0.01) {
      return {
        problem: `Cobertura XML: \`line-rate\` ${rate} disagrees with lines-covered/lines-valid (${covered}/${total})`,
      };
    }
  }
  return coverageFrom("cobertura", "lines", covered, total);
}
