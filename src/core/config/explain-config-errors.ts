/**
 * Turns zod issues into problems people can act on: the key path and its line in the file, what was found,
 * what is expected (in words, from the JSON Schema) and, for an unknown key, the key probably meant.
 */
import type { z } from "zod";
import {
  type ConfigProblem,
  describeFound,
  type Location,
  problemMessage,
  truncate,
} from "./config-error.js";
import { asNode, internalJsonSchema, schemaAt } from "./config-json-schema.js";
import { describeSchemaNode } from "./describe-expected.js";
import { formatPath, getAt, hasPath } from "./key-paths.js";
import { suggestKey } from "./key-suggestions.js";

/** Finds where a key path is in the source text (for a key: the key itself; else its value). */
export type Locate = (path: readonly PropertyKey[], atKey: boolean) => Location | undefined;

function withLocation(problem: Omit<ConfigProblem, "message">, where: Location | undefined): ConfigProblem {
  const message = problemMessage(problem.path, where, problem.found, problem.expected);
  return where ? { ...problem, message, line: where.line, column: where.column } : { ...problem, message };
}

/** One problem per bad key (an issue's duplicates dropped), in file order when lines are known. */
export function problemsFromIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  locate: Locate,
): ConfigProblem[] {
  const root = internalJsonSchema();
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  const add = (problem: ConfigProblem) => {
    const key = `${problem.path}\u0000${problem.expected}`;
    if (seen.has(key)) return;
    seen.add(key);
    problems.push(problem);
  };

  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const keyPath = [...issue.path, key];
        const suggestion = suggestKey(issue.path, key);
        const known = knownKeys(schemaAt(root, issue.path));
        const expected = suggestion
          ? `a known key: did you mean \`${suggestion}\`?`
          : known.length <= 10
            ? `one of the keys ${known.join(", ")}`
            : "a key listed in docs/CONFIGURATION.md";
        const path = formatPath(keyPath);
        const where = locate(keyPath, true);
        const found = `unknown key ${JSON.stringify(truncate(key))}`;
        const message = `${path ? `\`${path}\`` : "(top level)"}${where ? ` (line ${where.line})` : ""}: unknown key${
          suggestion ? `, did you mean \`${suggestion}\`?` : ` (expected ${expected})`
        }`;
        add(
          where
            ? { path, found, expected, message, line: where.line, column: where.column }
            : { path, found, expected, message },
        );
      }
      continue;
    }
    const path = formatPath(issue.path);
    const params = issue.code === "custom" ? asNode(issue.params) : undefined;
    let found: string;
    if (hasPath(input, issue.path)) found = describeFound(getAt(input, issue.path));
    else if (params && "value" in params && params.value !== undefined) {
      found = `${describeFound(params.value)}, the default`;
    } else found = "nothing";

    let expected: string;
    if (params && typeof params.expected === "string") expected = params.expected;
    else {
      const node = schemaAt(root, issue.path);
      expected = node ? describeSchemaNode(node) : issue.message;
    }
    add(withLocation({ path, found, expected }, locate(issue.path, false)));
  }
  // File order when lines are known (stable: problems without a line keep their place after those with one).
  return problems
    .map((problem, index) => ({ problem, index }))
    .sort(
      (a, b) =>
        (a.problem.line ?? Number.MAX_SAFE_INTEGER) - (b.problem.line ?? Number.MAX_SAFE_INTEGER) ||
        (a.problem.column ?? 0) - (b.problem.column ?? 0) ||
        a.index - b.index,
    )
    .map(({ problem }) => problem);
}

/** The keys a mapping may have, looking into the alternatives of a union (`network`: "open" or a mapping). */
function knownKeys(node: ReturnType<typeof schemaAt>): string[] {
  if (!node) return [];
  const alternatives = Array.isArray(node.anyOf) ? node.anyOf.map(asNode) : [node];
  return alternatives.flatMap((alternative) => Object.keys(asNode(alternative?.properties) ?? {}));
}
