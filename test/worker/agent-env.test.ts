/**
 * The agent's environment on a real runner: the toolchains setup actions and runner images announce (PATH
 * entries, JAVA_HOME, GOROOT, CARGO_HOME, …) pass, while every token and secret of the runner stays out —
 * by name, by value, and whatever name a toolchain-looking variable carries.
 */
import { describe, expect, it } from "vitest";
import { buildAgentEnv, isToolchainName, looksSecret } from "../../src/worker/isolation/agent-env.js";

const TOKEN = "ghs_installationtoken0123456789";

/** What a GitHub-hosted runner's worker step sees after setup-java, setup-go, rustup, pnpm and setup-python. */
const runner: NodeJS.ProcessEnv = {
  PATH: "/opt/hostedtoolcache/go/1.22.0/x64/bin:/home/runner/setup-pnpm/node_modules/.bin:/home/runner/.cargo/bin:/usr/bin:/bin",
  HOME: "/home/runner",
  LANG: "C.UTF-8",
  JAVA_HOME: "/opt/hostedtoolcache/Java_Temurin-Hotspot_jdk/17.0.10-7/x64",
  JAVA_HOME_17_X64: "/opt/hostedtoolcache/Java_Temurin-Hotspot_jdk/17.0.10-7/x64",
  GOROOT: "/opt/hostedtoolcache/go/1.22.0/x64",
  GOPATH: "/home/runner/go",
  GOPRIVATE: "github.com/acme/*",
  GOFLAGS: "-mod=mod",
  CARGO_HOME: "/home/runner/.cargo",
  RUSTUP_HOME: "/home/runner/.rustup",
  CARGO_TERM_COLOR: "always",
  PNPM_HOME: "/home/runner/setup-pnpm/node_modules/.bin",
  PYTHONPATH: "/work/src",
  pythonLocation: "/opt/hostedtoolcache/Python/3.12.2/x64",
  Python3_ROOT_DIR: "/opt/hostedtoolcache/Python/3.12.2/x64",
  PKG_CONFIG_PATH: "/opt/hostedtoolcache/Python/3.12.2/x64/lib/pkgconfig",
  GRADLE_USER_HOME: "/home/runner/.gradle",
  RUNNER_TOOL_CACHE: "/opt/hostedtoolcache",
  // The runner's own machinery and the worker's token.
  GITHUB_TOKEN: "ghs_workflowtoken9876543210",
  GH_TOKEN: TOKEN,
  "INPUT_GITHUB-TOKEN": TOKEN,
  INPUT_WORKING_DIR: "/home/runner/work",
  ACTIONS_RUNTIME_TOKEN: "runtime-token-abcdefgh",
  ACTIONS_RUNTIME_URL: "https://pipelines.actions.githubusercontent.com/abc/",
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: "oidc-token-abcdefgh",
  ACTIONS_ID_TOKEN_REQUEST_URL: "https://token.actions.githubusercontent.com/xyz",
  ACTIONS_CACHE_URL: "https://artifactcache.actions.githubusercontent.com/abc/",
  ACTIONS_RESULTS_URL: "https://results-receiver.actions.githubusercontent.com/",
  GITHUB_PATH: "/home/runner/work/_temp/_runner_file_commands/add_path_1",
  GITHUB_ENV: "/home/runner/work/_temp/_runner_file_commands/set_env_1",
  RUNNER_TEMP: "/home/runner/work/_temp",
  XDG_CONFIG_HOME: "/home/runner/.config",
  // Secrets a workflow put in the step's env, some under toolchain-looking names.
  NODE_AUTH_TOKEN: "npm-token-abcdefgh",
  CARGO_REGISTRY_TOKEN: "cargo-token-abcdefgh",
  CARGO_REGISTRIES_ACME_TOKEN: "cargo-acme-abcdefgh",
  GRADLE_PUBLISH_SECRET: "gradle-secret-abcdefgh",
  MAVEN_PASSWORD: "maven-password-abcdefgh",
  PIP_INDEX_URL: "https://deploy:s3cr3t-pw@pypi.acme.example/simple",
  GOPROXY: "https://proxy.golang.org,direct",
  SIGNING_KEY_PATH: "/home/runner/signing.key",
  AWS_SECRET_ACCESS_KEY: "aws-secret-abcdefgh",
  AWS_ACCESS_KEY_ID: "AKIAABCDEFGH",
  GOOGLE_APPLICATION_CREDENTIALS: "/home/runner/gcp.json",
  ANTHROPIC_API_KEY: "sk-ant-abcdefgh",
  OPENAI_API_KEY: "sk-openai-abcdefgh",
  // A toolchain setting that repeats a secret's value, and one that holds the worker's token.
  JAVA_TOOL_OPTIONS: "-Dkey=sk-openai-abcdefgh",
  MAVEN_OPTS: `-Dgithub.token=${TOKEN}`,
};

function build(over: Partial<Parameters<typeof buildAgentEnv>[0]> = {}) {
  return buildAgentEnv({
    parentEnv: runner,
    presetKeys: ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
    home: "/tmp/agent/home",
    tmpdir: "/tmp/agent/tmp",
    secretValues: [TOKEN],
    ...over,
  });
}

describe("the agent's environment on a runner with toolchains", () => {
  it("passes PATH with the setup actions' entries and the toolchain variables, as the runner set them", () => {
    const { env } = build();
    expect(env.PATH).toBe(runner.PATH);
    for (const name of [
      "JAVA_HOME",
      "JAVA_HOME_17_X64",
      "GOROOT",
      "GOPATH",
      "GOPRIVATE",
      "GOFLAGS",
      "GOPROXY",
      "CARGO_HOME",
      "RUSTUP_HOME",
      "CARGO_TERM_COLOR",
      "PNPM_HOME",
      "PYTHONPATH",
      "pythonLocation",
      "Python3_ROOT_DIR",
      "PKG_CONFIG_PATH",
      "GRADLE_USER_HOME",
      "RUNNER_TOOL_CACHE",
    ]) {
      expect(env[name], name).toBe(runner[name]);
    }
    // The home is the agent's own, never the runner user's.
    expect(env.HOME).toBe("/tmp/agent/home");
    expect(env.TMPDIR).toBe("/tmp/agent/tmp");
  });

  it("keeps every token and secret out, whatever its name looks like", () => {
    const { env } = build({ presetKeys: [] });
    const passed = JSON.stringify(env);
    for (const [name, value] of Object.entries(runner)) {
      if (
        looksSecret(name) ||
        /^(GITHUB_|RUNNER_TEMP|XDG_|GOOGLE_APPLICATION|PIP_INDEX_URL|JAVA_TOOL_OPTIONS|MAVEN_OPTS)/.test(name)
      ) {
        expect(env[name], name).toBeUndefined();
        if (value && value.length >= 8 && !value.startsWith("/")) expect(passed).not.toContain(value);
      }
    }
    expect(passed).not.toContain(TOKEN);
    expect(passed).not.toContain("s3cr3t-pw");
    expect(passed).not.toContain("sk-ant-abcdefgh");
  });

  it("names the toolchain-looking variables it withheld, so the log can say how to pass one", () => {
    const { withheld } = build({ presetKeys: [] });
    expect(withheld).toEqual(
      expect.arrayContaining([
        "CARGO_REGISTRIES_ACME_TOKEN",
        "CARGO_REGISTRY_TOKEN",
        "GRADLE_PUBLISH_SECRET",
        "INPUT_WORKING_DIR",
        "JAVA_TOOL_OPTIONS",
        "MAVEN_PASSWORD",
        "PIP_INDEX_URL",
        "SIGNING_KEY_PATH",
      ]),
    );
    // Not a toolchain name at all: simply not passed, nothing to explain.
    expect(withheld).not.toContain("GITHUB_TOKEN");
  });

  it("withholds a toolchain setting whose value carries a credential: an index URL's user, an option's password", () => {
    const { env, withheld } = buildAgentEnv({
      parentEnv: {
        PATH: "/usr/bin",
        // A token as the URL's user, no password: still a credential.
        PIP_INDEX_URL: "https://pypi-tok3n-abcdef@pypi.acme.example/simple",
        GOPROXY: "https://goproxy-tok3n@proxy.acme.example,direct",
        GRADLE_OPTS: "-Xmx2g -Dorg.gradle.project.signingPassword=hunter2-hunter2",
        MAVEN_OPTS: "-Drepo.token=mvn-tok3n-abcdef",
        JAVA_TOOL_OPTIONS: "-Djavax.net.ssl.trustStorePassword=changeit",
        // Plain settings of the same variables pass.
        GOFLAGS: "-mod=mod",
        SBT_OPTS: "-Xmx2g -Dsbt.color=true",
        UV_INDEX_URL: "https://pypi.acme.example/simple",
      },
      presetKeys: [],
      home: "/tmp/agent/home",
      tmpdir: "/tmp/agent/tmp",
    });
    expect(withheld).toEqual(["GOPROXY", "GRADLE_OPTS", "JAVA_TOOL_OPTIONS", "MAVEN_OPTS", "PIP_INDEX_URL"]);
    const passed = JSON.stringify(env);
    for (const secret of ["pypi-tok3n", "goproxy-tok3n", "hunter2", "mvn-tok3n", "changeit"])
      expect(passed).not.toContain(secret);
    expect(env).toMatchObject({
      GOFLAGS: "-mod=mod",
      SBT_OPTS: "-Xmx2g -Dsbt.color=true",
      UV_INDEX_URL: "https://pypi.acme.example/simple",
    });
  });

  it("gives the preset its own key and a configured name, never the tokens or another preset's key", () => {
    const { env, refused } = build({
      extraNames: ["NODE_AUTH_TOKEN", "OPENAI_API_KEY", "ACTIONS_RUNTIME_TOKEN", "GH_TOKEN"],
    });
    expect(env.ANTHROPIC_API_KEY).toBe("sk-ant-abcdefgh");
    // Listed in the default branch's configuration: a deliberate choice.
    expect(env.NODE_AUTH_TOKEN).toBe("npm-token-abcdefgh");
    expect(refused.map((r) => r.name).sort()).toEqual([
      "ACTIONS_RUNTIME_TOKEN",
      "GH_TOKEN",
      "OPENAI_API_KEY",
    ]);
    expect(JSON.stringify(env)).not.toContain(TOKEN);
  });
});

describe("toolchain and secret names", () => {
  it("tells toolchain settings from the runner's machinery", () => {
    for (const name of [
      "JAVA_HOME",
      "JAVA_HOME_21_ARM64",
      "GOROOT",
      "GOROOT_1_22_X64",
      "GOMODCACHE",
      "CLASSPATH",
    ])
      expect(isToolchainName(name), name).toBe(true);
    for (const name of [
      "GITHUB_PATH",
      "GITHUB_ENV",
      "RUNNER_TEMP",
      "XDG_CONFIG_HOME",
      "HOME",
      "USER",
      "GOOGLE_CLOUD_PROJECT",
    ])
      expect(isToolchainName(name), name).toBe(false);
  });

  it("reads a secret in the usual spellings", () => {
    for (const name of [
      "NPM_TOKEN",
      "MY_SECRET",
      "DB_PASSWORD",
      "PGPASSWORD",
      "DEPLOY_KEY",
      "AWS_ACCESS_KEY_ID",
      "SSH_PRIVATE_KEY",
      "SERVICE_CREDENTIALS",
      "NPM_CONFIG__AUTH",
      "INPUT_ANYTHING",
      "ACTIONS_CACHE_URL",
      "GROQ_API_KEY",
    ])
      expect(looksSecret(name), name).toBe(true);
    for (const name of ["JAVA_HOME", "GOPRIVATE", "KEYBOARD_LAYOUT", "MONKEY_HOME", "AUTHOR_NAME"])
      expect(looksSecret(name), name).toBe(false);
  });
});
