/**
 * docs/CONTROLLER.md's "exact API surface" lists every REST route the controller calls. It is read by people
 * deciding what to grant and what to watch, so a route the code calls and the list leaves out is a promise
 * broken: this compares the list with the routes written in the controller's GitHub code.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * The controller's code: every file under src/github but the worker's (worker-github.ts, worker-queries.ts) and
 * the setup commands' (setup/, but for the App's installation listing the hosted app's tick uses). A new file
 * there is counted without being named here.
 */
const CONTROLLER_FILES = readdirSync("src/github", { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".ts"))
  .filter((file) => !/^worker-/.test(file))
  .filter((file) => !file.startsWith("setup/") || file === "setup/app-installations.ts")
  .map((file) => `src/github/${file}`);

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
