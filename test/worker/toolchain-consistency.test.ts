/**
 * For every toolchain `autopilot init` knows, the `setup:` it proposes and the quality commands it detects run
 * in the same environment (src/worker/processes/toolchain-commands.ts): uv and Poetry projects test inside the
 * virtual environment their setup synced (`uv run`, `poetry run`), Gradle and Maven projects build with their
 * own wrapper. Where the tool exists on this machine, the pair runs for real in the worker's sandbox, as the
 * agent's user, through the worker's own parts (boundary.ts): setup first, then the quality commands, as a job
 * runs them. Once, a uv project's setup synced `.venv` and its test command ran the system's Python beside it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/core/config/index.js";
import { renderConfigFile } from "../../src/core/setup-files.js";
import { createIsolatedParts } from "../../src/worker/isolation/boundary.js";
import { detectQualityCommands } from "../../src/worker/processes/quality.js";
import { detectSetupCommands } from "../../src/worker/processes/setup-commands.js";
import { remoteAndClone, testAgentUser } from "./fixtures/real.js";

/** Whether a program is on this machine's PATH. */
const onPath = (program: string) => spawnSync("sh", ["-c", `command -v ${program}`]).status === 0;

/**
 * Maven without a network: a copy of this machine's local repository (hard links; the directories opened to
 * the agent's user), named by the project's `.mvn/maven.config` with offline mode on. In /var/tmp: the sandbox
 * shows the agent the host read-only but an empty /tmp of its own (agent-namespace.ts).
 */
const MAVEN_CACHE = "/root/.m2/repository";
let mavenRepo: string | null = null;
function mavenRepository(): string {
  if (mavenRepo) return mavenRepo;
  const dir = mkdtempSync(join("/var/tmp", "toolchain-m2-"));
  chmodSync(dir, 0o755);
  execFileSync("cp", ["-al", MAVEN_CACHE, join(dir, "repository")]);
  execFileSync("find", [join(dir, "repository"), "-type", "d", "-exec", "chmod", "755", "{}", "+"]);
  mavenRepo = join(dir, "repository");
  return mavenRepo;
}

/** The plugins a jar build runs, at versions this machine's Maven cache holds with their dependencies. */
const POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>shop</artifactId>
  <version>1.0.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <build>
    <pluginManagement>
      <plugins>
        <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
        <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
        <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
        <plugin><artifactId>maven-jar-plugin</artifactId><version>3.4.1</version></plugin>
      </plugins>
    </pluginManagement>
  </build>
</project>
`;

interface Toolchain {
  name: string;
  files: () => Record<string, string>;
  setup: string[];
  quality: string[];
  /** Whether the pair can run here (the tool is installed and needs nothing this machine cannot reach). */
  runnable: () => boolean;
}

const PYTEST = { "conftest.py": "", "test_price.py": "def test_price():\n    assert 1234 // 100 == 12\n" };
const NPM_PROJECT = {
  "package.json": JSON.stringify({ name: "shop", version: "1.0.0", scripts: { test: "node test.js" } }),
  "package-lock.json": JSON.stringify({
    name: "shop",
    version: "1.0.0",
    lockfileVersion: 3,
    requires: true,
    packages: { "": { name: "shop", version: "1.0.0" } },
  }),
  "test.js": "if (Math.floor(1234 / 100) !== 12) process.exit(1);\nconsole.log('price ok');\n",
};

const TOOLCHAINS: Toolchain[] = [
  {
    name: "npm",
    files: () => NPM_PROJECT,
    setup: ["npm ci"],
    quality: ["npm test"],
    runnable: () => onPath("npm"),
  },
  {
    name: "pnpm",
    files: () => ({
      "package.json": NPM_PROJECT["package.json"],
      "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
    }),
    setup: ["pnpm install --frozen-lockfile"],
    quality: ["pnpm run test"],
    runnable: () => false,
  },
  {
    name: "uv",
    files: () => ({
      ...PYTEST,
      "pyproject.toml": '[project]\nname = "shop"\nversion = "1.0.0"\n',
      "uv.lock": "",
    }),
    setup: ["uv sync --frozen"],
    quality: ["uv run --frozen python -m pytest -q"],
    // uv comes from PyPI or its installer, neither reachable here.
    runnable: () => onPath("uv"),
  },
  {
    name: "poetry",
    files: () => ({ ...PYTEST, "pyproject.toml": '[tool.poetry]\nname = "shop"\n', "poetry.lock": "" }),
    setup: ["poetry install --no-interaction"],
    quality: ["poetry run python -m pytest -q"],
    runnable: () => onPath("poetry"),
  },
  {
    name: "pip",
    files: () => ({ ...PYTEST, "requirements.txt": "pytest\n" }),
    setup: ["python -m pip install --user -r requirements.txt"],
    quality: ["python -m pytest -q"],
    // The install downloads pytest from PyPI, which this machine cannot reach.
    runnable: () => false,
  },
  {
    name: "go",
    files: () => ({ "go.mod": "module example.com/shop\n\ngo 1.22\n" }),
    setup: ["go mod download"],
    quality: ["go test ./..."],
    runnable: () => onPath("go"),
  },
  {
    name: "cargo",
    files: () => ({ "Cargo.toml": '[package]\nname = "shop"\nversion = "1.0.0"\n' }),
    setup: ["cargo fetch"],
    quality: ["cargo test"],
    // This machine's Rust toolchain lives in root's home, which the agent's user cannot enter.
    runnable: () => false,
  },
  {
    name: "gradle wrapper",
    files: () => ({ gradlew: "#!/bin/sh\n", "build.gradle": "plugins { id 'java' }\n" }),
    setup: ["./gradlew --no-daemon testClasses"],
    quality: ["./gradlew --no-daemon check"],
    // The wrapper downloads its Gradle distribution from services.gradle.org.
    runnable: () => false,
  },
  {
    name: "gradle",
    files: () => ({ "build.gradle.kts": "plugins { java }\n" }),
    setup: ["gradle --no-daemon testClasses"],
    quality: ["gradle --no-daemon check"],
    runnable: () => onPath("gradle"),
  },
  {
    name: "maven wrapper",
    files: () => ({ mvnw: "#!/bin/sh\n", "pom.xml": POM }),
    setup: ["./mvnw -B -ntp test-compile"],
    quality: ["./mvnw -B -ntp verify"],
    // The wrapper downloads Maven from repo.maven.apache.org.
    runnable: () => false,
  },
  {
    name: "maven",
    files: () => ({
      "pom.xml": POM,
      ".mvn/maven.config": `-Dmaven.repo.local=${mavenRepository()} -o\n`,
      "src/main/java/shop/Price.java":
        'package shop;\npublic class Price { public static String format(int c) { return "$" + c / 100; } }\n',
    }),
    setup: ["mvn -B -ntp test-compile"],
    quality: ["mvn -B -ntp verify"],
    runnable: () => onPath("mvn") && existsSync(MAVEN_CACHE),
  },
  {
    name: "make",
    files: () => ({ Makefile: "test:\n\ttest 2 -eq 2\n" }),
    setup: [],
    quality: ["make test"],
    runnable: () => onPath("make"),
  },
];

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
  if (mavenRepo) rmSync(join(mavenRepo, ".."), { recursive: true, force: true });
});

describe("setup and quality commands of each toolchain", () => {
  it.each(TOOLCHAINS.map((t) => [t.name, t] as const))(
    "%s: init's setup and the detected quality commands use the same environment",
    async (_name, toolchain) => {
      const { root, workspace } = await remoteAndClone(toolchain.files());
      roots.push(root);
      expect(await detectSetupCommands(workspace)).toEqual(toolchain.setup);
      expect(await detectQualityCommands(workspace)).toEqual(toolchain.quality);
    },
  );

  it("each setup's downloads are let through the agent's firewall in the file init writes", () => {
    const release = { source: "acme/autopilot", version: "1.0.0", commit: "a".repeat(40) };
    for (const toolchain of TOOLCHAINS.filter((t) => t.setup.length > 0)) {
      const text = renderConfigFile({
        release,
        agent: "claude-code",
        qualityCommands: [],
        setup: toolchain.setup,
      });
      const parsed = parseConfig(text);
      if (!parsed.ok) throw new Error(`${toolchain.name}: init's file does not parse`);
      const allow = parsed.config.network === "open" ? [] : parsed.config.network.allow;
      expect(allow.length, toolchain.name).toBeGreaterThan(0);
      if (/gradle|maven/.test(toolchain.name)) expect(allow).toContain("repo.maven.apache.org");
      if (toolchain.name === "gradle wrapper") expect(allow).toContain("services.gradle.org");
    }
  });

  const runnable = TOOLCHAINS.filter((t) => t.runnable());

  it("runs at least npm's and make's pair here (the runs below cannot all drop out)", () => {
    expect(runnable.map((t) => t.name)).toEqual(expect.arrayContaining(["npm", "make"]));
  });

  it.each(runnable.map((t) => [t.name, t] as const))(
    "%s: the setup, then the quality commands, pass in the sandbox as the agent's user",
    { timeout: 240_000 },
    async (_name, toolchain) => {
      const { root, workspace } = await remoteAndClone(toolchain.files());
      roots.push(root);
      const setup = await detectSetupCommands(workspace);
      const quality = await detectQualityCommands(workspace);
      expect([setup, quality]).toEqual([toolchain.setup, toolchain.quality]);
      const parts = await createIsolatedParts({
        workspace,
        workerDir: join(root, "worker"),
        agentBase: root,
        user: await testAgentUser(),
        parentEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8" },
        secretValues: [],
        killGraceMs: 500,
        warn: () => {},
      });
      try {
        for (const command of [...setup, ...quality]) {
          const [result] = await parts.quality.run([command], 180_000);
          expect(result?.passed, `${command}\n${result?.output}`).toBe(true);
        }
      } finally {
        await parts.boundary.close();
      }
    },
  );
});
