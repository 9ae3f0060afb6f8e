/**
 * How `autopilot doctor` prints its verdicts: ✓ / ! / ✗ / – per check, printed as each check is judged, a
 * check's several problems as a list, the fix under each warning and failure, and the count at the end.
 */
import type { DoctorCheck } from "./doctor-facts.js";
import { counted } from "./text/plural.js";

const MARK: Record<DoctorCheck["status"], string> = { pass: "✓", warn: "!", fail: "✗", skip: "–" };

export function doctorHeading(repo: string): string[] {
  return [`Autopilot doctor: ${repo}`, ""];
}

/** One check's lines: the verdict (its further detail lines as a list), then the fix. */
export function doctorCheckLines(check: DoctorCheck): string[] {
  const [first, ...items] = check.detail.split("\n");
  const lines = [`${MARK[check.status]} ${check.title}: ${first}`, ...items.map((item) => `    - ${item}`)];
  if (check.status !== "pass" && check.fix) {
    const [fix, ...more] = check.fix.split("\n");
    lines.push(`    fix: ${fix}`, ...more.map((line) => `         ${line}`));
  }
  return lines;
}

export function doctorSummary(checks: readonly DoctorCheck[]): string[] {
  const failedCount = checks.filter((c) => c.status === "fail").length;
  const warned = checks.filter((c) => c.status === "warn").length;
  const warnings = warned ? ` ${counted(warned, "warning")}.` : "";
  return [
    "",
    failedCount === 0 ? `All checks pass.${warnings}` : `${counted(failedCount, "check")} failed.${warnings}`,
  ];
}
