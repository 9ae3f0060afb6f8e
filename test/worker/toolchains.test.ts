/**
 * Real toolchains through the worker's real parts (boundary.ts), as the agent's own OS user: a quality command
 * that needs a toolchain variable and a PATH entry a setup action added succeeds, sees no token-like variable,
 * and a toolchain the agent's user cannot read is named in the log before any command fails on it.
 */
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { QualityRunner } from "../../src/worker/worker-deps.js";
import { createIsolatedParts } from "../../src/worker/isolation/boundary.js";
import { remoteAndClone, testAgentUser } from "./fixtures/real.js";

const TOKEN = "ghs_toolchaintesttoken0123456789";
let root: string;
let quality: QualityRunner;
let agentUid: number | null = null;
const warnings: string[] = [];

beforeAll(async () => {
  const repo = await remoteAndClone({ "README.md": "# tools\n" });
  root = repo.root;
  // A JDK-like toolchain in the tool cache (readable by every user), as setup-java leaves one.
  const jdk = join(root, "hostedtoolcache", "jdk", "17", "x64");
  await mkdir(join(jdk, "bin"), { recursive: true });
  await writeFile(join(jdk, "release"), 'JAVA_VERSION="17"\n');
  await writeFile(
    join(jdk, "bin", "fakejavac"),
    '#!/bin/sh\n[ -f "$JAVA_HOME/release" ] || { echo "JAVA_HOME is not set to a JDK" >&2; exit 2; }\necho "fakejavac from $JAVA_HOME"\n',
  );
  await chmod(join(jdk, "bin", "fakejavac"), 0o755);
  // A Rust-like toolchain in a home only its owner can enter (the runner user's ~/.cargo on a closed home).
  const closedHome = join(root, "runner-home");
  await mkdir(join(closedHome, ".cargo", "bin"), { recursive: true });
  await chmod(closedHome, 0o700);

  const user = await testAgentUser();
  agentUid = user.uid;
  const parts = await createIsolatedParts({
    workspace: repo.workspace,
    workerDir: join(root, "worker"),
    agentBase: root,
    user,
    parentEnv: {
      PATH: `${join(jdk, "bin")}:${join(closedHome, ".cargo", "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      LANG: "C.UTF-8",
      HOME: closedHome,
      JAVA_HOME: jdk,
      CARGO_HOME: join(closedHome, ".cargo"),
      // What must never reach a quality command.
      GITHUB_TOKEN: "ghs_workflowtoken0123456789",
      "INPUT_GITHUB-TOKEN": TOKEN,
      ACTIONS_RUNTIME_TOKEN: "runtime-token-0123456789",
      ACTIONS_ID_TOKEN_REQUEST_URL: "https://token.actions.example/abc",
      ACTIONS_CACHE_URL: "https://cache.actions.example/abc",
      NODE_AUTH_TOKEN: "npm-token-0123456789",
      CARGO_REGISTRY_TOKEN: "cargo-token-0123456789",
      DEPLOY_PASSWORD: "deploy-password-0123456789",
      ANTHROPIC_API_KEY: "sk-ant-0123456789",
      MAVEN_OPTS: `-Dtoken=${TOKEN}`,
    },
    secretValues: [TOKEN],
    killGraceMs: 500,
    warn: (message) => warnings.push(message),
  });
  quality = parts.quality;
}, 120_000);

afterAll(async () => {
  if (root) {
    await chmod(join(root, "runner-home"), 0o755).catch(() => {});
    await rm(root, { recursive: true, force: true });
  }
});

describe("a quality command that needs a toolchain", () => {
  it("finds it through PATH and JAVA_HOME, as the agent's user, with no token-like variable in sight", async () => {
    const [result] = await quality.run(["fakejavac && id -u && env"], 60_000);
    expect(result?.passed, result?.output).toBe(true);
    expect(result?.output).toContain(`fakejavac from ${join(root, "hostedtoolcache", "jdk", "17", "x64")}`);
    expect(result?.output).toContain(`\n${agentUid}\n`);
    const env = result?.output ?? "";
    expect(env).toMatch(/^JAVA_HOME=/m);
    expect(env).toMatch(/^CARGO_HOME=/m);
    for (const name of [
      "GITHUB_TOKEN",
      "INPUT_GITHUB-TOKEN",
      "ACTIONS_RUNTIME_TOKEN",
      "ACTIONS_ID_TOKEN_REQUEST_URL",
      "ACTIONS_CACHE_URL",
      "NODE_AUTH_TOKEN",
      "CARGO_REGISTRY_TOKEN",
      "DEPLOY_PASSWORD",
      "ANTHROPIC_API_KEY",
      "MAVEN_OPTS",
    ])
      expect(env, name).not.toMatch(new RegExp(`^${name}=`, "m"));
    expect(env).not.toMatch(/ghs_|token-0123456789|password-0123456789|sk-ant-/);
  });

  it("was preceded by a warning naming the toolchain the agent's user cannot reach, and what to do", () => {
    const text = warnings.find((w) => w.includes("cannot use these toolchain directories"));
    expect(text).toBeDefined();
    expect(text).toContain(`CARGO_HOME=${join(root, "runner-home", ".cargo")} (needs write)`);
    // Its `bin` on PATH is reached all the same: the sandbox opens it, read-only, through the closed home.
    expect(text).not.toContain(`PATH entry ${join(root, "runner-home", ".cargo", "bin")}`);
    expect(text).toContain("docs/WORKER.md");
    // The reachable JDK is not named.
    expect(text).not.toContain("hostedtoolcache");
  });

  it("names the withheld toolchain-looking secrets and how to pass one", () => {
    const text = warnings.find((w) => w.includes("look like secrets"));
    expect(text).toContain("CARGO_REGISTRY_TOKEN");
    expect(text).toContain("MAVEN_OPTS");
    expect(text).toContain("agents.primary.env");
  });
});
