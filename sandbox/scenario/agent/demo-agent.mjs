#!/usr/bin/env node
// The sandbox's scripted demo agent: a real child process that the worker launches like any agent CLI
// (the `custom` preset: `node demo-agent.mjs --script <file> <prompt_file>`). It edits files in its working
// directory and prints its final message on stdout, ending with a signal, as a real agent would.
//
// Plain JavaScript with no dependencies so it runs from any workspace without a build or node_modules.
// The script format is documented (and typed) in demo-agent.ts.
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";

const args = process.argv.slice(2);
let scriptPath = process.env.AUTOPILOT_DEMO_SCRIPT ?? "";
let promptPath = "";
let issueArg = "";
// A name for this agent configuration (e.g. `--agent fallback`), recorded in the run log.
let agentName = process.env.AUTOPILOT_DEMO_AGENT_NAME ?? "";
// `--user-namespace BWRAP`: run again inside an unprivileged user-namespace sandbox (see below).
let bwrapPath = "";
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === "--script") scriptPath = args[++i] ?? "";
  else if (arg === "--user-namespace") bwrapPath = args[++i] ?? "";
  else if (arg === "--agent") agentName = args[++i] ?? "";
  else if (arg === "--issue") issueArg = args[++i] ?? "";
  else if (arg === "-p" || arg === "--prompt-file") promptPath = args[++i] ?? "";
  else if (!arg.startsWith("--")) promptPath = arg;
}

function readPrompt() {
  if (promptPath && existsSync(promptPath)) return readFileSync(promptPath, "utf8");
  if (promptPath) return promptPath; // a prompt given inline
  try {
    return readFileSync(0, "utf8");
  } catch {
    return "";
  }
}

const prompt = readPrompt();
const script =
  scriptPath && existsSync(scriptPath) ? JSON.parse(readFileSync(scriptPath, "utf8")) : { issues: {} };
const issues = script.issues ?? {};

// The demo on a machine whose user may neither create users nor run bubblewrap as root
// (sandbox/scenario/demo-isolation.ts): the worker starts this agent as that user with no wall of its own, so
// the agent puts itself in one, bubblewrap in an unprivileged user namespace: its own processes (the worker's,
// and the token in their environment, out of sight), no network, the machine read-only but for its working
// directory and its state.
if (bwrapPath) {
  const stateDirOf = script.stateDir ?? (scriptPath ? join(dirname(resolve(scriptPath)), "state") : "");
  const writable = [process.cwd(), stateDirOf].filter(Boolean);
  const inner = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--user-namespace") i++;
    else inner.push(args[i]);
  }
  const sandboxed = spawnSync(
    bwrapPath,
    [
      "--unshare-user",
      "--unshare-pid",
      "--unshare-net",
      "--unshare-ipc",
      "--unshare-uts",
      "--die-with-parent",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      ...writable.flatMap((dir) => ["--bind", dir, dir]),
      "--chdir",
      process.cwd(),
      "--",
      process.execPath,
      process.argv[1],
      ...inner,
    ],
    { stdio: "inherit" },
  );
  process.exit(sandboxed.status ?? 1);
}

function currentBranch() {
  const result = spawnSync("git", ["rev-parse", "--abbrev-ref", "HEAD"], { encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim() : "";
}

/** Which issue this run is for: explicit, environment, branch name, title in the prompt, then `#N`. */
function findIssue() {
  const candidates = [issueArg, process.env.AUTOPILOT_ISSUE ?? ""];
  const branch = /issue-(\d+)/.exec(currentBranch());
  if (branch) candidates.push(branch[1]);
  for (const c of candidates) if (c && issues[c]) return c;
  for (const [number, entry] of Object.entries(issues)) {
    if (entry.title && prompt.includes(entry.title)) return number;
  }
  // A split's sub-issue (not seeded: no entry by number) is found by its title before any `#N` it mentions.
  if (titledEntry()) return candidates.find(Boolean) ?? "unknown";
  for (const match of prompt.matchAll(/#(\d+)/g)) if (issues[match[1]]) return match[1];
  return candidates.find(Boolean) ?? "unknown";
}

/** The entry of a split's sub-issue whose title the prompt's task heading names (`byTitle`), if any. */
function titledEntry() {
  for (const [title, entry] of Object.entries(script.byTitle ?? {})) if (prompt.includes(title)) return entry;
  return null;
}

const issue = findIssue();
const scripted = issues[issue] ?? titledEntry() ?? script.default ?? { behavior: "complete" };
// One agent configuration's own variant of the entry (`byAgent`, e.g. best of N's candidates doing it differently).
const entry =
  agentName && scripted.byAgent?.[agentName] ? { ...scripted, ...scripted.byAgent[agentName] } : scripted;

// Per-issue run counter and history, kept outside the workspace (each job starts from a fresh clone).
const stateDir = script.stateDir ?? (scriptPath ? join(dirname(resolve(scriptPath)), "state") : "");
const statePath = stateDir ? join(stateDir, `issue-${issue}.json`) : "";
const state =
  statePath && existsSync(statePath) ? JSON.parse(readFileSync(statePath, "utf8")) : { runs: 0, log: [] };
const runIndex = state.runs;
state.runs += 1;

const behaviors = Array.isArray(entry.behavior) ? entry.behavior : [entry.behavior ?? "complete"];
const behavior = behaviors[Math.min(runIndex, behaviors.length - 1)];

const lines = [];
const say = (text) => lines.push(text);

function commentLine(path, text) {
  if (/\.(js|mjs|cjs|ts|tsx|jsx|java|go|rs|c|cc|cpp|h)$/.test(path)) return `// ${text}`;
  if (/\.(sql|lua|hs)$/.test(path)) return `-- ${text}`;
  if (/\.(md|txt)$/.test(path)) return text;
  return `# ${text}`;
}

function writeFiles(files) {
  for (const [path, content] of Object.entries(files ?? {})) {
    mkdirSync(dirname(path) || ".", { recursive: true });
    if (content === null) {
      rmSync(path, { force: true });
      say(`Removed ${path}`);
    } else {
      writeFileSync(path, content);
      say(`Wrote ${path}`);
    }
  }
}

function appendFiles(files) {
  for (const [path, content] of Object.entries(files ?? {})) {
    mkdirSync(dirname(path) || ".", { recursive: true });
    appendFileSync(path, content);
    say(`Appended to ${path}`);
  }
}

function workingTreeClean() {
  const result = spawnSync("git", ["status", "--porcelain"], { encoding: "utf8" });
  return result.status === 0 && result.stdout.trim() === "";
}

/** The first line of feedback in the prompt that reads like a review or a failure, for the summary. */
function feedbackLine() {
  const patterns = [
    /^\s*not ok\b/i,
    /\berror\b/i,
    /changes requested|request(ed)? changes/i,
    /\b(failed|failure|fails)\b/i,
    /review/i,
  ];
  for (const pattern of patterns) {
    const line = prompt.split("\n").find((l) => pattern.test(l) && l.trim().length > 3);
    if (line)
      return line
        .trim()
        .replace(/^[>*\-\s]+/, "")
        .slice(0, 160);
  }
  return null;
}

/** Applies the issue's files; on a later run that would change nothing, records the revision so it commits. */
function applyWork(files, note) {
  writeFiles(files);
  appendFiles(entry.append);
  if (runIndex > 0) writeFiles(entry.followUp);
  if (runIndex > 0 && workingTreeClean()) {
    const target = Object.keys(files ?? {})[0] ?? entry.revisionFile ?? "NOTES.md";
    const feedback = feedbackLine();
    mkdirSync(dirname(target), { recursive: true });
    appendFileSync(
      target,
      `\n${commentLine(target, `Revision ${runIndex + 1}: ${feedback ?? note ?? "follow-up"}`)}\n`,
    );
    say(`Revised ${target}`);
  }
}

function saveState(record) {
  // The prompt is kept so a scenario can check what reached the agent (an answer, a CI failure, a review).
  state.log.push({
    at: new Date().toISOString(),
    ...(agentName ? { agent: agentName } : {}),
    ...record,
    prompt: prompt.length > 40_000 ? `${prompt.slice(0, 40_000)}\n…(truncated)` : prompt,
  });
  if (statePath) {
    mkdirSync(dirname(statePath), { recursive: true });
    // Replaced, not rewritten: the file may belong to the user an earlier job of this task ran as.
    const fresh = `${statePath}.${process.pid}.tmp`;
    writeFileSync(fresh, `${JSON.stringify(state, null, 2)}\n`);
    renameSync(fresh, statePath);
  }
}

function finish(signal, exitCode = 0) {
  saveState({ behavior, signal: signal ?? null, exitCode });
  const summary = entry.summary ?? `Worked on issue #${issue}.`;
  // Usage as the custom preset reads it: made-up but plausible numbers, so the dashboard's statistics move.
  const input = 800 + Math.round(prompt.length / 4);
  const output = 150 + 60 * lines.length;
  const usage = { input, output, costUsd: Number(((input * 3 + output * 15) / 1e6).toFixed(6)) };
  const out = [`autopilot-usage: ${JSON.stringify(usage)}`, ...lines.map((l) => `• ${l}`), "", summary];
  if (signal) out.push("", `<promise>${signal}</promise>`);
  process.stdout.write(`${out.join("\n")}\n`);
  process.exit(exitCode);
}

function failWith(message, exitCode = 1) {
  saveState({ behavior, error: message, exitCode });
  // Claude Code prints API errors on stdout and exits 1 with an empty stderr.
  process.stdout.write(`${message}\n`);
  process.exit(exitCode);
}

function promptHas(needle) {
  return Boolean(needle) && prompt.toLowerCase().includes(String(needle).toLowerCase());
}

// A planning run (the plan gate): the plan goes in the final message, between <plan> tags. The agent scribbles a
// file all the same, as a careless one would: the worker must keep nothing of a planning run. A plan is not one
// of the issue's behaviour runs, and takes no time.
if (prompt.includes("## This is a planning run")) {
  state.runs = runIndex;
  state.plans = (state.plans ?? 0) + 1;
  writeFileSync("PLANNING-SCRIBBLE.md", "notes while planning\n");
  const plans = Array.isArray(entry.plan) ? entry.plan : [entry.plan ?? "1. Make the change.\n2. Test it."];
  const plan = plans[Math.min(state.plans - 1, plans.length - 1)];
  saveState({ behavior: "plan", signal: null, exitCode: 0 });
  const usage = { input: 800 + Math.round(prompt.length / 4), output: 200, costUsd: 0.003 };
  process.stdout.write(
    `autopilot-usage: ${JSON.stringify(usage)}\nI read the code.\n\n<plan>\n${plan}\n</plan>\n`,
  );
  process.exit(0);
}

// A review run (`review` in the configuration): the verdict goes in the final message, in a <review> block of
// JSON. The reviewer scribbles a file and commits it all the same, as a careless one would: the worker must keep
// nothing of a review run. A review is not one of the issue's behaviour runs.
if (prompt.includes("## This is a review run")) {
  state.runs = runIndex;
  state.reviews = (state.reviews ?? 0) + 1;
  writeFileSync("REVIEW-SCRIBBLE.md", "notes while reviewing\n");
  spawnSync("git", ["add", "REVIEW-SCRIBBLE.md"]);
  spawnSync("git", ["commit", "-q", "-m", "reviewer scribble"]);
  const verdicts = Array.isArray(entry.review) ? entry.review : [entry.review ?? { verdict: "approve" }];
  const verdict = verdicts[Math.min(state.reviews - 1, verdicts.length - 1)];
  saveState({ behavior: "review", signal: null, exitCode: 0, verdict: verdict.verdict });
  const usage = { input: 900 + Math.round(prompt.length / 4), output: 250, costUsd: 0.004 };
  process.stdout.write(
    `autopilot-usage: ${JSON.stringify(usage)}\nI read the diff.\n\n<review>\n${JSON.stringify(verdict)}\n</review>\n`,
  );
  process.exit(0);
}

// A run that takes a while, as a real agent's does (the process stays killable meanwhile).
if (entry.sleepSeconds > 0 && behavior !== "hang") {
  await new Promise((resolve) => setTimeout(resolve, entry.sleepSeconds * 1000));
}

switch (behavior) {
  case "spend": {
    // Writes its files, then goes on working: a usage report every half second (as a CLI streams usage per
    // API call) until the worker stops it at its budget; after 40 reports it completes.
    writeFiles(entry.files);
    saveState({ behavior, signal: null, spending: true });
    const step = entry.spendPerStep ?? { input: 20000, output: 4000, costUsd: 0.12 };
    for (let i = 0; i < 40; i++) {
      process.stdout.write(`autopilot-usage: ${JSON.stringify(step)}\n`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    finish("COMPLETE");
    break;
  }

  case "complete":
    applyWork(entry.files, "done");
    finish("COMPLETE");
    break;

  case "objective": // the objective marker (`completion: objective`) naming how each requirement is met
    applyWork(entry.files, "done");
    finish(`OBJECTIVE_MET: ${entry.objective ?? "every requirement of the issue is met"}`);
    break;

  case "broken": // writes the broken variant and claims completion: the quality gate catches it
    writeFiles(entry.broken ?? entry.files);
    say("Claimed done without running the tests");
    finish("COMPLETE");
    break;

  case "fail-gate-once":
    if (runIndex === 0) {
      writeFiles(entry.broken ?? entry.files);
      say("Claimed done without running the tests");
    } else {
      const feedback = feedbackLine();
      if (feedback) say(`Read the failure: ${feedback}`);
      applyWork(entry.files, "fixed the failing tests");
    }
    finish("COMPLETE");
    break;

  case "ci-fix": {
    // First run: work that passes the local gate but fails CI. Later runs fix it from the CI summary.
    const failure = feedbackLine();
    if (runIndex === 0 || !failure) {
      writeFiles(entry.broken ?? entry.files);
    } else {
      say(`CI reported: ${failure}`);
      applyWork(entry.files, `fixed CI: ${failure}`);
    }
    finish("COMPLETE");
    break;
  }

  case "blocked":
    say("Looked for the missing piece");
    finish(`BLOCKED: ${entry.reason ?? "a dependency this task needs does not exist yet"}`);
    break;

  case "needs-human": {
    const answered = entry.answerIncludes ? promptHas(entry.answerIncludes) : false;
    if (answered) {
      say(`Used the answer: ${entry.answerIncludes}`);
      applyWork(entry.files, "applied the answer");
      finish("COMPLETE");
    } else {
      finish(`NEEDS_HUMAN: ${entry.question ?? "Which option should I take?"}`);
    }
    break;
  }

  case "steered":
    if (entry.answerIncludes && promptHas(entry.answerIncludes)) {
      say(`Took the maintainer's comment into account: ${entry.answerIncludes}`);
      applyWork(entry.files, "applied the maintainer's comment");
      finish("COMPLETE");
    } else {
      mkdirSync(dirname(entry.revisionFile ?? "NOTES.md"), { recursive: true });
      appendFileSync(entry.revisionFile ?? "NOTES.md", `Still working (run ${runIndex + 1})\n`);
      say("Made some progress, more to do");
      finish(null);
    }
    break;

  case "rate-limit":
    failWith(
      entry.message ??
        "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit",
    );
    break;

  case "usage-limit": {
    const reset = new Date(Date.now() + 1000 * (entry.resetInSeconds ?? 30));
    const epoch = Math.floor(reset.getTime() / 1000);
    const template = entry.message ?? "Claude AI usage limit reached|{resetEpoch}";
    failWith(
      template.replaceAll("{resetEpoch}", String(epoch)).replaceAll("{resetIso}", reset.toISOString()),
    );
    break;
  }

  case "crash":
    failWith(entry.message ?? "Error: the agent crashed (scripted failure)");
    break;

  case "never-finish":
    // Makes progress (a commit per iteration) but never signals completion.
    mkdirSync(dirname(entry.revisionFile ?? "NOTES.md"), { recursive: true });
    appendFileSync(entry.revisionFile ?? "NOTES.md", `Still working (run ${runIndex + 1})\n`);
    say("Made some progress, more to do");
    finish(null);
    break;

  case "idle":
    say("Thought about it; changed nothing");
    finish(null);
    break;

  case "hang":
    saveState({ behavior, signal: null, hung: true });
    process.stdout.write("Working…\n");
    setInterval(() => {}, 60_000);
    break;

  case "gated": {
    const gated = entry.gatedFiles ?? {
      "migrations/001_create_orders.sql": "CREATE TABLE orders (id integer);\n",
    };
    const feedback = runIndex > 0 ? feedbackLine() : null;
    if (feedback) say(`Addressing: ${feedback}`);
    applyWork({ ...gated, ...(entry.files ?? {}) }, "addressed the review");
    finish("COMPLETE");
    break;
  }

  default:
    failWith(`demo agent: unknown behavior "${behavior}" for issue ${issue}`, 2);
}
