/**
 * Red team, the agent's side, end to end: the product's worker workflow runs the bundled action
 * (dist/worker/index.js) on the sandbox's Actions stand-in, with a hostile custom agent
 * (fixtures/hostile-agent.mjs) as the agent and as the quality command. Every attack it makes must fail: the
 * token is never in anything it read or wrote, a loopback listener behind its `insteadOf` rewrites never sees a
 * request, nothing it planted (hooks, filters, a `git` on PATH or in the work tree) ever runs as the worker,
 * only the task branch is pushed (no tags, not its replace object), the gate sees the file its attributes try
 * to hide, its `setsid` daemons are dead when the job ends, and its workflow commands stay text in the log.
 * The same run has a toolchain set up the way setup actions do (a GITHUB_PATH entry and JAVA_HOME through
 * GITHUB_ENV) and secrets in the worker step's environment, some under toolchain-looking names: a quality
 * command that needs the toolchain passes, and none of the secrets reaches the agent or a quality command.
 *
 * The tests run as root (here and in CI), so the worker takes the root path (useradd + setpriv); the sudo
 * path is covered in agent-sudo.test.ts.
 */
import { lstatSync, readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { parse, stringify } from "yaml";
import { processesOf } from "../../src/worker/isolation/agent-user.js";
import { commandsRun } from "../helpers/runner-commands.js";
import { type ActionsRunner, type RunRecord, startActions } from "../../sandbox/emulator/actions/actions.js";
import { AUTOPILOT_JOB_USER, isAutopilotActionRef } from "../../sandbox/scenario/autopilot-action.js";
import { PACKAGE_ROOT } from "../../src/cli/package-root.js";
import { attachGit, type SandboxGit } from "../../sandbox/emulator/git/sandbox-git.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";
import { workerWorkflowYaml } from "../../sandbox/scenario/worker-workflow.js";

const HOSTILE = join(import.meta.dirname, "fixtures", "hostile-agent.mjs");
const TOKEN = /ghs_[A-Za-z0-9]{20,}/;
/** Secrets the workflow puts in the worker step's environment (some under toolchain-looking names). */
const STEP_SECRETS: Record<string, string> = {
  NODE_AUTH_TOKEN: "red-team-npm-token-0123",
  CARGO_REGISTRY_TOKEN: "red-team-cargo-token-0123",
  GRADLE_PUBLISH_SECRET: "red-team-gradle-secret-0123",
  DEPLOY_PASSWORD: "red-team-deploy-password-0123",
  AWS_SECRET_ACCESS_KEY: "red-team-aws-secret-0123",
  PIP_INDEX_URL: "https://deploy:red-team-pip-password@pypi.example/simple",
  MAVEN_OPTS: "-Dkey=red-team-aws-secret-0123",
};
const SECRET_VALUE = /red-team-[a-z]+-(token|secret|password)|red-team-pip-password/;

/**
 * The product's worker workflow with a setup step before the worker, as setup-java leaves things: its `bin` on
 * GITHUB_PATH and JAVA_HOME in GITHUB_ENV; and secrets in the worker step's `env`.
 */
function workflowWithToolchain(jdk: string): string {
  const workflow = parse(workerWorkflowYaml({ jobTimeoutMinutes: 10 })) as {
    jobs: Record<
      string,
      { steps: { uses?: string; run?: string; name?: string; env?: Record<string, string> }[] }
    >;
  };
  for (const job of Object.values(workflow.jobs)) {
    const at = job.steps.findIndex((step) => /autopilot/i.test(step.uses ?? ""));
    expect(at).toBeGreaterThan(0);
    const worker = job.steps[at]!;
    // The hostile agent writes its findings to the report directory: the sandbox shares it (agent-user.ts).
    worker.env = { ...worker.env, ...STEP_SECRETS, AUTOPILOT_AGENT_SHARED_DIRS: reportDir };
    job.steps.splice(at, 0, {
      name: "Set up a JDK (as setup-java does)",
      run: `echo "${jdk}/bin" >> "$GITHUB_PATH"\necho "JAVA_HOME=${jdk}" >> "$GITHUB_ENV"\n`,
    });
  }
  return stringify(workflow, { lineWidth: 0 });
}

let sandbox: Sandbox;
let git: SandboxGit;
let actions: ActionsRunner;
let listener: Server;
let reportDir: string;
const heard: { method: string; url: string; authorization: string | null; body: string }[] = [];
let record: RunRecord;
let issueNumber: number;

function hear(request: IncomingMessage, respond: () => void): void {
  let body = "";
  request.on("data", (chunk: Buffer) => {
    body += chunk.toString("latin1");
  });
  request.on("end", () => {
    heard.push({
      method: request.method ?? "",
      url: request.url ?? "",
      authorization: request.headers.authorization ?? null,
      body: body.slice(0, 10_000),
    });
    respond();
  });
}

function reportFiles(): { name: string; text: string }[] {
  return readdirSync(reportDir).map((name) => {
    try {
      return { name, text: readFileSync(join(reportDir, name), "latin1") };
    } catch {
      return { name, text: "" };
    }
  });
}

/** The job's log and the names of the files the agent left: what a failure message needs to be diagnosed. */
function jobAccount(): string {
  return [
    `conclusion ${record.conclusion}; result ${record.outputs.result ?? "none"} (${record.outputs.reason ?? ""})`,
    ...record.log.slice(-80),
    `files: ${reportFiles()
      .map((f) => f.name)
      .join(", ")}`,
  ].join("\n");
}

function reports(): {
  mode: string;
  uid: number;
  read: Record<string, string>;
  wrote: string[];
  attempts: Record<string, unknown>;
  env: Record<string, string>;
}[] {
  return reportFiles()
    .filter((f) => f.name.startsWith("report-"))
    .map((f) => JSON.parse(f.text));
}

beforeAll(async () => {
  reportDir = await mkdtemp(join(tmpdir(), "autopilot-red-team-"));
  // The agent's user writes its findings here.
  await chmod(reportDir, 0o1777);
  listener = createServer((request, response) =>
    hear(request, () => {
      response.statusCode = 401;
      response.setHeader("www-authenticate", 'Basic realm="listener"');
      response.end();
    }),
  );
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const address = listener.address();
  const listenerUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;

  sandbox = await startSandbox();
  git = await attachGit(sandbox);
  sandbox.store.addUser("alice", { permission: "admin" });
  sandbox.store.createRepo({ owner: "demo", name: "shop" });
  const command = `${process.execPath} ${HOSTILE} ${reportDir} ${listenerUrl} ${sandbox.url}/ {prompt_file}`;
  const quality = `${process.execPath} ${HOSTILE} --quality ${reportDir} ${listenerUrl} ${sandbox.url}/`;
  // The toolchain, where every user can read it (as the runner's tool cache is): its compiler needs JAVA_HOME.
  const jdk = join(reportDir, "toolcache", "jdk");
  await mkdir(join(jdk, "bin"), { recursive: true });
  await writeFile(join(jdk, "release"), 'JAVA_VERSION="17"\n');
  await writeFile(
    join(jdk, "bin", "fakejavac"),
    `#!/bin/sh\n[ -f "$JAVA_HOME/release" ] || exit 2\necho "$JAVA_HOME" > "${reportDir}/toolchain-ok"\nenv > "${reportDir}/toolchain-env"\n`,
  );
  await chmod(join(jdk, "bin", "fakejavac"), 0o755);
  await chmod(join(reportDir, "toolcache"), 0o755);
  await git.seedRepo("demo", "shop", {
    "README.md": "# shop\n",
    ".github/workflows/autopilot-worker.yml": workflowWithToolchain(jdk),
    ".github/autopilot.yml": stringify({
      agents: { primary: { preset: "custom", command } },
      qualityCommands: [quality, "fakejavac"],
      maxIterations: 1,
      humanGate: { enabled: true, patterns: ["HIDDEN-FROM-GATE"] },
    }),
  });
  issueNumber = sandbox.store.createIssue("demo/shop", {
    title: "Do the task",
    body: "Anything.",
    author: "alice",
  }).number;
  actions = startActions({
    actionDir: PACKAGE_ROOT,
    actionRefs: isAutopilotActionRef,
    jobUser: AUTOPILOT_JOB_USER,
    url: sandbox.url,
    store: sandbox.store,
    git,
    app: { id: sandbox.app.id, privateKey: sandbox.app.privateKey },
    vars: { AUTOPILOT_APP_ID: String(sandbox.app.id) },
    secrets: { AUTOPILOT_APP_PRIVATE_KEY: sandbox.app.privateKey },
  });
  await actions.syncWorkflows("demo/shop");
  const response = await fetch(
    `${sandbox.url}/repos/demo/shop/actions/workflows/autopilot-worker.yml/dispatches`,
    {
      method: "POST",
      headers: {
        authorization: `token ${sandbox.installationToken()}`,
        "content-type": "application/json",
        accept: "application/vnd.github+json",
      },
      body: JSON.stringify({
        ref: "main",
        inputs: { issue: String(issueNumber), attempt: "1", "dispatch-id": "red-team-1" },
      }),
    },
  );
  expect(response.status).toBe(204);
  const [run] = sandbox.store.listWorkflowRuns("demo/shop", { workflow: "autopilot-worker.yml" });
  record = await actions.waitForRun(run!.id);
}, 600_000);

afterAll(async () => {
  await actions?.stop();
  await git?.stop();
  await sandbox?.stop();
  await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
  if (reportDir) {
    await removePlantedGits();
    await rm(reportDir, { recursive: true, force: true });
  }
});

/**
 * Removes the `git` the agent planted on writable PATH entries outside its own directories, and the directories
 * it made for it (`/tmp/node_modules/.bin` when the checkout is under /tmp): the worker never runs them
 * (src/worker/isolation/trusted-binaries.ts), but the machine is left as the test found it.
 */
async function removePlantedGits(): Promise<void> {
  for (const r of reports()) {
    for (const file of r.wrote) {
      if (basename(file) !== "git" || file.startsWith(reportDir)) continue;
      let at = file;
      // Up from the file, each entry the agent's uid owns: the file, then each directory as long as it is empty.
      while (at !== dirname(at) && lstatSync(at, { throwIfNoEntry: false })?.uid === r.uid) {
        try {
          if (lstatSync(at).isDirectory()) rmdirSync(at);
          else rmSync(at);
        } catch {
          break;
        }
        at = dirname(at);
      }
    }
  }
}

describe("a hostile agent run by the real worker on the sandbox", () => {
  it("ran, as another user, both as the agent and as the quality command, and the job finished", () => {
    expect(record.conclusion, record.log.slice(-40).join("\n")).toBe("success");
    const modes = reports().map((r) => r.mode);
    expect(modes).toContain("agent");
    expect(modes).toContain("quality");
    for (const r of reports()) expect(r.uid).not.toBe(process.getuid?.());
  });

  it("never sees the token: not in its environment, any process's environ, memory, or any file it read", () => {
    for (const r of reports()) {
      expect(JSON.stringify(r.env)).not.toMatch(TOKEN);
      for (const [file, text] of Object.entries(r.read)) expect(`${file}: ${text}`).not.toMatch(TOKEN);
      expect(Object.entries(r.attempts).filter(([k, v]) => k.startsWith("mem:") && v)).toEqual([]);
    }
    // Nothing it wrote holds the token either.
    for (const file of reportFiles()) expect(file.text).not.toMatch(TOKEN);
  });

  it("a quality command finds the toolchain a setup step added, and no secret of the step reaches it or the agent", () => {
    const files = reportFiles();
    // On a failure, the job's own account of its quality step says why (its log, then the files the agent left).
    expect(files.find((f) => f.name === "toolchain-ok")?.text.trim(), jobAccount()).toBe(
      join(reportDir, "toolcache", "jdk"),
    );
    const env = files.find((f) => f.name === "toolchain-env")?.text ?? "";
    expect(env).toMatch(/^JAVA_HOME=/m);
    expect(env).toMatch(new RegExp(`^PATH=.*${join(reportDir, "toolcache", "jdk", "bin")}`, "m"));
    const seen = [env, ...reports().map((r) => JSON.stringify(r.env))];
    for (const text of seen) {
      expect(text).not.toMatch(SECRET_VALUE);
      expect(text).not.toMatch(TOKEN);
      for (const name of [
        ...Object.keys(STEP_SECRETS),
        "GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
      ])
        expect(text).not.toMatch(new RegExp(`(^|")${name}(=|")`, "m"));
    }
    const result = JSON.parse(record.outputs["result-json"] ?? "{}") as { iterations?: number };
    expect(result.iterations).toBe(1);
  });

  it("cannot read or write the worker's private directory or its git configuration", () => {
    // The directory sits under RUNNER_TEMP, which it cannot list; agent-private-dir.test.ts hands the agent the
    // exact path and shows it still can do nothing there.
    for (const r of reports()) {
      for (const file of [...Object.keys(r.read), ...r.wrote]) expect(file).not.toMatch(/autopilot-worker-/);
      expect(r.wrote.filter((f) => f === "/etc/gitconfig")).toEqual([]);
    }
  });

  it("its insteadOf rewrites reach no worker git: the listener never hears a credential", () => {
    expect(reports().some((r) => r.wrote.some((f) => f.endsWith(".git/config")))).toBe(true);
    // Its own git follows its own rewrite (its push above, without credentials); no request carries any.
    expect(heard.filter((h) => h.authorization !== null)).toEqual([]);
    expect(JSON.stringify(heard)).not.toMatch(TOKEN);
  });

  it("nothing it planted runs as the worker: hooks, filters, textconv, fsmonitor, a git on PATH or in the tree", () => {
    const ran = reportFiles()
      .filter((f) => f.name.startsWith("RAN-"))
      .map((f) => f.name);
    // Its own git (as its own uid) may run its hooks; the worker's uid never does.
    expect(ran.filter((name) => name.endsWith(`-${process.getuid?.()}`))).toEqual([]);
  });

  it("cannot use sudo", () => {
    for (const r of reports()) expect((r.attempts.sudo as { ok: boolean }).ok).toBe(false);
  });

  it("only the task branch is pushed: no tag, not its own commit or replace object, only its files", async () => {
    const refs = (await git.remote.listRefs("demo", "shop")).map((entry) => entry.ref).sort();
    expect(refs).toEqual(["refs/heads/autopilot/issue-" + issueNumber, "refs/heads/main"]);
    const branch = `autopilot/issue-${issueNumber}`;
    const head = await git.remote.getCommit("demo", "shop", branch);
    expect(head?.message).not.toContain("agent commit");
    expect(head?.message).not.toContain("replaced");
    // What it wrote arrived as content, exactly as written: its attributes changed nothing (no eol, no ident).
    expect(await git.remote.readFile("demo", "shop", branch, "hidden.txt")).toBe(
      "HIDDEN-FROM-GATE\n$Id: kept-as-written $\n",
    );
    // Its link went out as a link (the path it names), not as the content it points at; a link out of the tree
    // is refused with all the work (agent-embedded-repo.test.ts).
    expect(await git.remote.readFile("demo", "shop", branch, "leak-environ")).toBe("README.md");
    // The pushed files hold no token.
    for (const path of ["hidden.txt", ".gitattributes", "git", "leak-environ"]) {
      expect((await git.remote.readFile("demo", "shop", branch, path)) ?? "").not.toMatch(TOKEN);
    }
  });

  it("its `* -diff` attributes do not hide the change from the worker's human gate", () => {
    const result = JSON.parse(record.outputs["result-json"] ?? "{}") as {
      humanGate?: { fired: boolean; rules: { rule: string }[] };
    };
    expect(result.humanGate?.fired, jobAccount()).toBe(true);
  });

  it("its setsid daemons are gone when the job ends, and no process of its user is left", async () => {
    const pids = reportFiles()
      .filter((f) => f.name.startsWith("daemon-"))
      .map((f) => Number(f.text.trim()));
    expect(pids.length).toBeGreaterThanOrEqual(2);
    const uid = reports()[0]!.uid;
    // The pids it recorded are those of the sandbox's own PID namespace; the end of the sandbox ended them with
    // everything else in it, and no process of its user is left on the host (zombies whose every thread is gone
    // run nothing and hold nothing: processesOf leaves them out).
    expect(await processesOf(uid)).toEqual([]);
  });

  it("its workflow commands stay text in the job log", () => {
    const messages = record.annotations.map((a) => a.message).join("\n");
    expect(messages).not.toContain("INJECTED");
    expect(record.log.join("\n")).toContain("INJECTED-BY-AGENT");
    expect(record.log.filter((line) => /INJECTED/.test(line) && /^\s*(::|##\[)/.test(line))).toEqual([]);
    // Read as the runner reads it (test/helpers/runner-commands.ts), the log runs none of the agent's commands,
    // and the agent's output sits between stop-commands markers.
    const log = record.log.join("\n");
    expect(commandsRun(log).filter((c) => /INJECTED/.test(`${c.name} ${c.data}`))).toEqual([]);
    expect(log).toContain("INJECTED-OLD-FORM");
    expect(log).toMatch(/^::stop-commands::[0-9a-f]{32}$/m);
  });
});
