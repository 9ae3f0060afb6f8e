/**
 * How the user ran this `autopilot`, so every command line the CLI prints (help examples, doctor's and init's
 * fixes, the sandbox's rehearsal) is one they can paste: `npx github:acme/autopilot`, `npx autopilot` (a
 * project's own install), `autopilot` (a global install), or `node bin/autopilot.js` (a clone, `npm start --`
 * included). Never a placeholder such as `npx github:OWNER/autopilot`.
 */
import { readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { isPlaceholderSource } from "../core/setup-files.js";
import { PACKAGE_ROOT } from "./package-root.js";

/** What the invocation is read from (tests hand in their own). */
export interface InvocationFacts {
  env: NodeJS.ProcessEnv;
  /** The script node was started with (process.argv[1]). */
  script: string | undefined;
  cwd: string;
  /** Where this Autopilot's package.json is. */
  packageRoot: string;
  /** The repository Autopilot is published from, when it is known (setup-context.ts currentRelease). */
  source: string | null;
  /** The package spec npx installed this copy from (`github:acme/autopilot`), when npx did. */
  npxSpec: string | null;
}

/** `node <path>`, the path as short as the user would type it (relative unless it climbs out twice). */
function nodeCommand(script: string, cwd: string): string {
  const fromCwd = relative(cwd, script);
  const path = fromCwd.startsWith(`..${sep}..`) || isAbsolute(fromCwd) ? script : fromCwd;
  return `node ${path.includes(" ") ? JSON.stringify(path) : path}`;
}

/** The command prefix that runs this Autopilot again, as the user started it. */
export function invokingCommand(facts: InvocationFacts): string {
  const { env, script, cwd, packageRoot } = facts;
  // A source set to the templates' placeholder (AUTOPILOT_SOURCE=OWNER/autopilot) names no published copy.
  const source = facts.source && !isPlaceholderSource(facts.source) ? facts.source : null;
  const bin = join(packageRoot, "bin", "autopilot.js");
  // `npx …` and `npm exec …` run the bin as the script "npx" (npm's libnpmexec).
  if (env.npm_lifecycle_event === "npx") {
    if (facts.npxSpec) return `npx ${facts.npxSpec}`;
    if (basename(dirname(packageRoot)) === "node_modules") return "npx autopilot";
    if (source) return `npx github:${source}`;
    return nodeCommand(bin, cwd);
  }
  // `npm start -- …` / `npm run sandbox -- …` in a clone of Autopilot: its other commands run with node.
  if (env.npm_lifecycle_event && env.npm_package_json === join(packageRoot, "package.json"))
    return nodeCommand(bin, env.INIT_CWD ?? cwd);
  if (script) {
    if (script.split(/[\\/]/).includes("node_modules") && basename(script) === "autopilot")
      return "npx autopilot";
    if (basename(script) === "autopilot") return "autopilot";
    if (basename(script) === "autopilot.js") return nodeCommand(script, cwd);
  }
  // Embedded (a test calling main()): the published source when known, else this copy's bin.
  return source ? `npx github:${source}` : nodeCommand(bin, cwd);
}

/**
 * The spec npx installed this copy from: npx keeps each package it fetched in `_npx/<hash>/node_modules/<name>`
 * beside a package.json whose dependency is the spec the user typed. Null anywhere else.
 */
export function npxSpecOf(packageRoot: string): string | null {
  const modules = dirname(packageRoot);
  if (basename(modules) !== "node_modules" || basename(dirname(dirname(modules))) !== "_npx") return null;
  try {
    const manifest = JSON.parse(readFileSync(join(dirname(modules), "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    const name = basename(packageRoot);
    const spec = manifest.dependencies?.[name];
    if (!spec) return null;
    return /[:/]/.test(spec) ? spec : `${name}@${spec}`;
  } catch {
    return null;
  }
}

/** The invoking command of this process. */
export function currentInvocation(env: NodeJS.ProcessEnv, source: string | null): string {
  return invokingCommand({
    env,
    script: process.argv[1],
    cwd: process.cwd(),
    packageRoot: PACKAGE_ROOT,
    source,
    npxSpec: npxSpecOf(PACKAGE_ROOT),
  });
}
