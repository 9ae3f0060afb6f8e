import { describe, expect, it } from "vitest";
import {
  DEFAULT_HUMAN_GATE_PATHS,
  DEFAULT_HUMAN_GATE_PATTERNS,
  globToRegExp,
  HUMAN_GATE_MAX_HITS,
  type HumanGateOptions,
  matchHumanGate,
  NEVER_AUTO_APPROVE,
  parseUnifiedDiff,
} from "../../../src/core/gates/human-gate.js";
import { HumanGateHitSchema } from "../../../src/core/tasks/worker-result.js";

const ON: HumanGateOptions = { enabled: true, patterns: [], paths: [] };
const OFF: HumanGateOptions = { enabled: false, patterns: [], paths: [] };

/** A one-file diff adding `lines` at the top of `file`. */
function addedDiff(file: string, lines: string[]): string {
  return [
    `diff --git a/${file} b/${file}`,
    `--- a/${file}`,
    `+++ b/${file}`,
    `@@ -1,0 +1,${lines.length} @@`,
    ...lines.map((l) => `+${l}`),
  ].join("\n");
}

const onlyCommands = (commands: string[]) => ({ diff: "", paths: [], commands });
const rulesOf = (result: ReturnType<typeof matchHumanGate>) => result.hits.map((h) => h.rule);

describe("the default rules, each where it shows up", () => {
  it.each<[string, string]>([
    ["deploy", "npm run deploy"],
    ["deploy", "./scripts/deploy.sh staging"],
    ["deploy", "kubectl rollout restart deploy/web && redeploy"],
    ["deploy", "DEPLOY_PROD=1 make"],
    ["deploy", "node -e 'autoDeploy()'"],
    ["deploy", "npm run deployNow"],
    ["migrate", "npx prisma migrate dev"],
    ["migrate", "bin/rails db:migrate"],
    ["publish", "cargo publish"],
    ["rm -rf", "rm -rf dist"],
    ["rm -rf", "rm -r -f node_modules"],
    ["rm -rf", "rm --recursive --force build"],
    ["drop table", `psql -c "DROP TABLE users"`],
    ["delete from", `sqlite3 app.db "DELETE FROM sessions WHERE expired = 1"`],
    ["terraform apply", "terraform -chdir=infra apply -auto-approve"],
    ["production", "NODE_ENV=production node server.js"],
    ["api.*key", "export OPENAI_API_KEY=test"],
    ["secret", "gh secret set TOKEN"],
    ["password", "mysql --password=test"],
  ])("%s fires on the command %j", (rule, command) => {
    const result = matchHumanGate(onlyCommands([command]), ON);
    expect(result.fired).toBe(true);
    expect(rulesOf(result)).toContain(rule);
    expect(result.hits.find((h) => h.rule === rule)).toMatchObject({
      where: "command",
      neverAutoApprove: false,
    });
  });

  it.each<[string, string]>([
    ["deploy", "Run `make deploy` after merging."],
    ["migrate", "await knex.migrate.latest(); // migrates the schema"],
    ["publish", "Publish the package when the tests pass."],
    ["drop table", "DROP TABLE IF EXISTS legacy_users;"],
    ["delete from", "  await db.query(`DELETE FROM sessions WHERE expires < now()`);"],
    ["production", "  if (process.env.NODE_ENV === 'production') {"],
    ["api.*key", "const apiKey = process.env.SERVICE_KEY;"],
    ["api.*key", "headers['x-api-key'] = token;"],
    ["api.*key", "this.openaiApiKey = key;"],
    ["secret", `  client_secret: \${{ secrets.CLIENT_SECRET }}`],
    ["secret", "const clientSecret = load();"],
    ["password", "  password: hunter2"],
    ["password", "if (!isStrongPassword(input)) throw new Error('weak');"],
  ])("%s fires on the added line %j", (rule, text) => {
    const result = matchHumanGate({ diff: addedDiff("src/app.ts", [text]), paths: [], commands: [] }, ON);
    expect(rulesOf(result)).toContain(rule);
    expect(result.hits.find((h) => h.rule === rule)?.where).toBe("diff");
  });

  it.each<[string, string]>([
    [".github/workflows/**", ".github/workflows/ci.yml"],
    ["**/migrations/**", "db/migrations/001_init.sql"],
    ["**/migrations/**", "migrations/0002.py"],
    ["**/db/migrate/**", "app/db/migrate/20240101_add_users.rb"],
    [".env*", ".env"],
    [".env*", "config/.env.production"],
    ["terraform/**", "terraform/main.tf"],
    ["*.tf", "infra/network/vpc.tf"],
    ["*.tfvars", "prod.tfvars"],
    ["CODEOWNERS", ".github/CODEOWNERS"],
  ])("the path rule %s fires on %s", (rule, path) => {
    const result = matchHumanGate({ diff: "", paths: [path], commands: [] }, ON);
    expect(result.hits).toContainEqual({ rule, where: "path", match: path, neverAutoApprove: false });
  });

  it("documents its defaults", () => {
    expect(DEFAULT_HUMAN_GATE_PATTERNS).toEqual([
      "deploy",
      "migrate",
      "publish",
      "rm -rf",
      "drop table",
      "delete from",
      "terraform apply",
      "production",
      "api.*key",
      "secret",
      "password",
    ]);
    expect(DEFAULT_HUMAN_GATE_PATHS).toContain(".github/workflows/**");
  });
});

describe("no silly false positives", () => {
  it.each([
    "See docs/deployment.md for the deployment guide.",
    "class Deployer {}",
    "const DEPLOYMENT_ID = 1;",
    "bus.publish(event);",
    "function publishEvent() {}",
    "// delete from cache if expired",
    "const secretary = 'Ann';",
    "The migration guide moved.",
    "const rapidKey = 1;",
    "api keyboard shortcuts",
    "Our products page",
    "fs.rmSync(dir, { recursive: true, force: true });",
    "git push origin feature-fix",
    "git push -u origin autopilot/issue-7",
    "The date format is: YYYY-MM-DD",
  ])("%j fires nothing", (text) => {
    const result = matchHumanGate({ diff: addedDiff("src/app.ts", [text]), paths: [], commands: [text] }, ON);
    expect(result).toEqual({ fired: false, hits: [] });
  });

  it.each([
    "docs/deployment.md",
    "src/migrationGuide.ts",
    "Dockerfile",
    "package-lock.json",
    "src/environment.ts",
    "terraform.md",
  ])("the path %s fires nothing", (path) => {
    expect(matchHumanGate({ diff: "", paths: [path], commands: [] }, ON).fired).toBe(false);
  });
});

describe("the never-auto-approve rules", () => {
  it.each<[string, string]>([
    ["push --force", "git push --force origin main"],
    ["push --force", "git push -f"],
    ["push --force", "git push origin +main"],
    ["push --force", "git push --force-with-lease origin autopilot/issue-7"],
    ["push --force", "git -C repo push -f origin main"],
    ["rm -rf /", "sudo rm -rf /"],
    ["rm -rf /", "rm -fr /*"],
    ["rm -rf /", "rm -rf --no-preserve-root /"],
    ["rm -rf ~", "rm -rf ~"],
    ["rm -rf ~", "rm -Rf ~/"],
    ["rm -rf ~", 'rm -rf "$HOME"'],
    ["drop database", `psql -c "DROP DATABASE app"`],
    ["format c:", "format c: /q"],
    ["production deploy", "deploy to production"],
    ["production deploy", "vercel deploy --prod"],
    ["production deploy", "../deploy.sh production"],
    ["production deploy", "production deploy of v2"],
    ["npm publish", "npm publish --access public"],
    ["npm publish", "pnpm publish"],
    ["npm publish", "yarn npm publish"],
  ])("%s fires on %j, even with the gate disabled", (rule, command) => {
    for (const options of [ON, OFF, { enabled: false, patterns: ["nothing"], paths: ["nowhere/**"] }]) {
      const result = matchHumanGate(onlyCommands([command]), options);
      expect(result.fired).toBe(true);
      expect(result.hits).toContainEqual(
        expect.objectContaining({ rule, where: "command", neverAutoApprove: true }),
      );
    }
  });

  it("fires in the diff too, with the gate disabled", () => {
    const diff = addedDiff("scripts/release.sh", ["npm publish", "git push --force"]);
    const result = matchHumanGate({ diff, paths: [], commands: [] }, OFF);
    expect(result.hits.map((h) => [h.rule, h.match])).toEqual([
      ["npm publish", "scripts/release.sh:1: npm publish"],
      ["push --force", "scripts/release.sh:2: git push --force"],
    ]);
  });

  it("gates changes to Autopilot's own configuration, with the gate disabled", () => {
    for (const path of [".github/autopilot.yml", ".github/autopilot.yaml"]) {
      expect(matchHumanGate({ diff: "", paths: [path], commands: [] }, OFF).hits).toEqual([
        { rule: ".github/autopilot.{yml,yaml}", where: "path", match: path, neverAutoApprove: true },
      ]);
    }
  });

  it("is the seed's list, plus the configuration file", () => {
    expect(NEVER_AUTO_APPROVE).toEqual([
      "push --force",
      "rm -rf /",
      "rm -rf ~",
      "drop database",
      "format c:",
      "production deploy",
      "npm publish",
      ".github/autopilot.{yml,yaml}",
    ]);
  });

  it("is the only thing that fires when the gate is disabled", () => {
    const input = {
      diff: addedDiff("src/db.ts", ["const password = 'x';", "DROP TABLE t;"]),
      paths: [".github/workflows/ci.yml", ".env"],
      commands: ["rm -rf dist", "npm run deploy", "terraform apply"],
    };
    expect(matchHumanGate(input, OFF)).toEqual({ fired: false, hits: [] });
    expect(matchHumanGate(input, ON).fired).toBe(true);
  });

  it("lists never-auto-approve hits first", () => {
    const result = matchHumanGate(onlyCommands(["rm -rf build", "npm publish"]), ON);
    expect(result.hits[0]).toMatchObject({ rule: "npm publish", neverAutoApprove: true });
  });
});

describe("diffs", () => {
  it("looks only at added lines: removing a secret does not fire", () => {
    const diff = [
      "diff --git a/src/config.ts b/src/config.ts",
      "--- a/src/config.ts",
      "+++ b/src/config.ts",
      "@@ -1,3 +1,2 @@",
      " export const config = {",
      "-  password: 'hunter2',",
      "   port: 8080,",
    ].join("\n");
    expect(matchHumanGate({ diff, paths: [], commands: [] }, ON)).toEqual({ fired: false, hits: [] });
  });

  it("does not read the +++ header as an added line, but reads a +++ line inside a hunk", () => {
    const header = [
      "diff --git a/docs/secrets.md b/docs/secrets.md",
      "--- a/docs/secrets.md",
      "+++ b/docs/secrets.md",
      "@@ -1 +1 @@",
      "-old",
      "+new",
    ].join("\n");
    expect(matchHumanGate({ diff: header, paths: [], commands: [] }, ON).fired).toBe(false);
    const inHunk = addedDiff("notes.md", ["++ password rotation"]);
    expect(rulesOf(matchHumanGate({ diff: inHunk, paths: [], commands: [] }, ON))).toEqual(["password"]);
  });

  it("names the file and the new line number, not the line's content", () => {
    const diff = [
      "diff --git a/src/config.ts b/src/config.ts",
      "--- a/src/config.ts",
      "+++ b/src/config.ts",
      "@@ -10,2 +10,3 @@",
      " const a = 1;",
      " const b = 2;",
      "+const DB_PASSWORD = 'correct horse battery staple';",
    ].join("\n");
    expect(matchHumanGate({ diff, paths: [], commands: [] }, ON).hits).toEqual([
      { rule: "password", where: "diff", match: "src/config.ts:12: PASSWORD", neverAutoApprove: false },
    ]);
  });

  it("counts a deleted workflow as a touched path", () => {
    const diff = [
      "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml",
      "deleted file mode 100644",
      "--- a/.github/workflows/ci.yml",
      "+++ /dev/null",
      "@@ -1,2 +0,0 @@",
      "-name: CI",
      "-on: push",
    ].join("\n");
    expect(matchHumanGate({ diff, paths: [], commands: [] }, ON).hits).toEqual([
      {
        rule: ".github/workflows/**",
        where: "path",
        match: ".github/workflows/ci.yml",
        neverAutoApprove: false,
      },
      { rule: ".github/**", where: "path", match: ".github/workflows/ci.yml", neverAutoApprove: false },
    ]);
  });

  it("parses several files, renames and hunks", () => {
    const diff = [
      "diff --git a/a.txt b/a.txt",
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1,2 +1,2 @@",
      "-x",
      "+y",
      " z",
      "@@ -20 +20,2 @@",
      " q",
      "+r",
      "diff --git a/old name.txt b/new name.txt",
      "similarity index 90%",
      "rename from old name.txt",
      "rename to new name.txt",
      "--- a/old name.txt",
      "+++ b/new name.txt",
      "@@ -1 +1 @@",
      "-s",
      "+t",
      "\\ No newline at end of file",
    ].join("\n");
    const parsed = parseUnifiedDiff(diff);
    expect(parsed.added).toEqual([
      { file: "a.txt", line: 1, text: "y" },
      { file: "a.txt", line: 21, text: "r" },
      { file: "new name.txt", line: 1, text: "t" },
    ]);
    expect(parsed.paths.sort()).toEqual(["a.txt", "new name.txt", "old name.txt"]);
  });
});

describe("configuration", () => {
  it("adds the configured patterns (case-insensitive) and paths", () => {
    const options = { enabled: true, patterns: ["kubectl\\s+apply"], paths: ["infra/", "Dockerfile"] };
    const result = matchHumanGate(
      {
        diff: "",
        paths: ["infra/k8s/app.yaml", "services/api/Dockerfile"],
        commands: ["KUBECTL apply -f x.yaml"],
      },
      options,
    );
    expect(result.hits).toEqual([
      { rule: "kubectl\\s+apply", where: "command", match: "KUBECTL apply", neverAutoApprove: false },
      { rule: "infra/", where: "path", match: "infra/k8s/app.yaml", neverAutoApprove: false },
      { rule: "Dockerfile", where: "path", match: "services/api/Dockerfile", neverAutoApprove: false },
    ]);
  });

  it("treats an invalid pattern as literal text, and never fires on an empty match", () => {
    expect(rulesOf(matchHumanGate(onlyCommands(["echo (oops"]), { ...ON, patterns: ["(oops"] }))).toEqual([
      "(oops",
    ]);
    expect(matchHumanGate(onlyCommands(["echo hello"]), { ...ON, patterns: ["x*"] }).fired).toBe(false);
  });

  it("ignores the configured rules when disabled", () => {
    const options = { enabled: false, patterns: ["kubectl"], paths: ["infra/**"] };
    expect(matchHumanGate({ diff: "", paths: ["infra/a"], commands: ["kubectl apply"] }, options).fired).toBe(
      false,
    );
  });
});

describe("hits", () => {
  it("are valid HumanGateHit records", () => {
    const result = matchHumanGate(
      { diff: addedDiff("a.ts", ["password"]), paths: [".env"], commands: ["npm publish"] },
      ON,
    );
    for (const hit of result.hits) expect(HumanGateHitSchema.parse(hit)).toEqual(hit);
  });

  it("do not repeat credentials from a command", () => {
    const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    const result = matchHumanGate(
      onlyCommands([`git push https://bot:${token}@github.com/o/r main --force`]),
      ON,
    );
    expect(JSON.stringify(result)).not.toContain(token);
    expect(result.hits[0]?.match).toContain("***@");
  });

  it("are de-duplicated and capped, never-auto-approve first", () => {
    const lines = Array.from({ length: 200 }, (_, i) => `const password_${i} = 1;`);
    const result = matchHumanGate(
      { diff: addedDiff("a.ts", lines), paths: [], commands: ["npm publish", "npm publish"] },
      ON,
    );
    expect(result.hits).toHaveLength(HUMAN_GATE_MAX_HITS);
    expect(result.hits.filter((h) => h.rule === "npm publish" && h.where === "command")).toHaveLength(1);
    expect(result.hits[0]!.neverAutoApprove).toBe(true);
  });
});

describe("globToRegExp", () => {
  it.each<[string, string, boolean]>([
    [".github/workflows/**", ".github/workflows/ci.yml", true],
    [".github/workflows/**", ".github/workflows/nested/x.yml", true],
    [".github/workflows/**", "a/.github/workflows/ci.yml", false],
    ["*.tf", "main.tf", true],
    ["*.tf", "infra/main.tf", true],
    ["*.tf", "main.tfx", false],
    ["src/*.ts", "src/a.ts", true],
    ["src/*.ts", "src/a/b.ts", false],
    ["src/**/*.ts", "src/a.ts", true],
    ["src/**/*.ts", "src/a/b/c.ts", true],
    ["/Dockerfile", "Dockerfile", true],
    ["/Dockerfile", "api/Dockerfile", false],
    ["file?.txt", "file1.txt", true],
    ["file?.txt", "file10.txt", false],
    ["*.{yml,yaml}", "a/b.yaml", true],
    ["[ab].txt", "b.txt", true],
    ["[!ab].txt", "b.txt", false],
    ["a+b(c).txt", "a+b(c).txt", true],
  ])("%s on %s: %s", (glob, path, expected) => {
    expect(globToRegExp(glob).test(path)).toBe(expected);
  });
});
