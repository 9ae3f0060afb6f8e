/**
 * docs/CONTROLLER.md's "exact API surface" lists every REST route the controller calls. It is read by people
 * deciding what to grant and what to watch, so a route the code calls and the list leaves out is a promise
 * broken: this compares the list with the routes written in the controller's GitHub code.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const CONTROLLER_FILES = [
  "src/github/execution/executor.ts",
  "src/github/execution/merge-mechanisms.ts",
  "src/github/snapshot/snapshot.ts",
  "src/github/permissions.ts",
  "src/github/pull-verification.ts",
  "src/github/snapshot/worker-run-listing.ts",
  "src/github/setup/app-installations.ts",
  "src/github/snapshot/buried-comments.ts",
  "src/github/snapshot/config-at-commit.ts",
  "src/github/gateway.ts",
  "src/github/execution/task-recovery.ts",
  "src/github/snapshot/branch-activity.ts",
  "src/github/snapshot/discarded-branches.ts",
  "src/github/reconcile-lock.ts",
];

function routesInCode(): string[] {
  const routes = new Set<string>();
  for (const file of CONTROLLER_FILES) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/"((?:GET|POST|PUT|PATCH|DELETE) \/[^"\s]*)"/g)) routes.add(m[1]!);
  }
  return [...routes].sort();
}

function routesInDoc(): string[] {
  const doc = readFileSync("docs/CONTROLLER.md", "utf8");
  const section = doc.slice(doc.indexOf("## The exact API surface"));
  const block = section.slice(section.indexOf("```") + 3, section.indexOf("```", section.indexOf("```") + 3));
  const routes = new Set<string>();
  for (const m of block.matchAll(/\b(GET|POST|PUT|PATCH|DELETE)\s+(\/\S+)/g)) {
    routes.add(`${m[1]} ${m[2]!.replace(/,$/, "")}`);
  }
  // The installation token is made by Probot's auth, not by the controller's code.
  routes.delete("POST /app/installations/{id}/access_tokens");
  return [...routes].sort();
}

describe("docs/CONTROLLER.md, the exact API surface", () => {
  it("lists exactly the REST routes the controller's code calls", () => {
    expect(routesInDoc()).toEqual(routesInCode());
  });
});
