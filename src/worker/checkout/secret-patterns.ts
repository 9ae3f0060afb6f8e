/**
 * Credentials by their shape, in the lines a change adds: secretlint's recommended rule set
 * (https://github.com/secretlint/secretlint/tree/master/packages/%40secretlint/secretlint-rule-preset-recommend:
 * AWS, GCP, GitHub, npm, Slack, SendGrid, Shopify, OpenAI, Anthropic, Linear, 1Password, private keys, basic auth
 * and database connection strings), maintained upstream rather than as a list of our own. A value the worker
 * itself holds is refused outright (src/core/gates/secret-leak.ts); a credential that only looks like one (a key the
 * agent found in the repository, a test fixture) is a question for a person, so each match is a human-gate hit
 * `secret-pattern` naming the file, the line and the rule, never the matched text.
 *
 * The hit is marked never-auto-approve and applies whatever `humanGate.enabled` says: a credential reaching a
 * branch is what the gate exists for. AWS access key IDs are scanned too (the rule's `enableIDScanRule`, off
 * upstream): an ID in code usually comes with its secret nearby, and a person can wave a fixture through.
 *
 * secretlint runs in-process on text: the added lines of each file, joined, under the file's name (its npm and GCP
 * rules look at `.npmrc`, `package.json`, `.json`), but never a `.p12` name: its GCP rule reads a `.p12` file from
 * disk by that name, and nothing here may read a file (the worker's directory is not the agent's tree). Only the first MAX_SCANNED_BYTES of a file's added lines are read: its rules are regular
 * expressions over the whole text, and a generated megabyte file would cost seconds per push.
 */
import { lintSource } from "@secretlint/core";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import type { HumanGateHit } from "../../core/tasks/worker-result.js";
import { parseUnifiedDiff } from "../../core/gates/human-gate.js";

export const SECRET_PATTERN_RULE = "secret-pattern";

/** At most this many hits: enough to send the change to a person and name where to look. */
const MAX_HITS = 20;
const MAX_SCANNED_BYTES = 1024 * 1024;

const CONFIG = {
  rules: [
    {
      id: "@secretlint/secretlint-rule-preset-recommend",
      rule: recommended,
      rules: [{ id: "@secretlint/secretlint-rule-aws", options: { enableIDScanRule: true } }],
    },
  ],
};

/** The rule's short name: `@secretlint/secretlint-rule-github` → `github`. */
function shortRule(id: string): string {
  return id.replace(/^@secretlint\/secretlint-rule-/, "");
}

function shortPath(path: string): string {
  const clean = path.replace(/[`\r\n]/g, "?");
  return clean.length > 120 ? `…${clean.slice(-119)}` : clean;
}

/** The name secretlint is given for a file's added lines (see the file comment). */
function sourceName(path: string): string {
  return `added-lines/${path}${/\.p12$/i.test(path) ? ".txt" : ""}`;
}

/** The human-gate hits of a unified diff's added lines (see the file comment). */
export async function credentialPatternHits(diff: string): Promise<HumanGateHit[]> {
  const byFile = new Map<string, { lines: string[]; numbers: number[]; bytes: number }>();
  for (const added of parseUnifiedDiff(diff).added) {
    const file = byFile.get(added.file) ?? { lines: [], numbers: [], bytes: 0 };
    byFile.set(added.file, file);
    if (file.bytes > MAX_SCANNED_BYTES) continue;
    file.lines.push(added.text);
    file.numbers.push(added.line);
    file.bytes += added.text.length + 1;
  }
  const hits: HumanGateHit[] = [];
  const seen = new Set<string>();
  for (const [path, file] of byFile) {
    const result = await lintSource({
      source: { filePath: sourceName(path), content: file.lines.join("\n"), contentType: "text" },
      options: { config: CONFIG, maskSecrets: true, noPhysicFilePath: true },
    });
    for (const message of result.messages) {
      const line = file.numbers[message.loc.start.line - 1] ?? message.loc.start.line;
      const match = `${shortPath(path)}:${line}: ${shortRule(message.ruleId)} ${message.messageId}`;
      if (seen.has(match)) continue;
      seen.add(match);
      hits.push({ rule: SECRET_PATTERN_RULE, where: "diff", match, neverAutoApprove: true });
      if (hits.length >= MAX_HITS) return hits;
    }
  }
  return hits;
}
