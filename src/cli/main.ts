/**
 * The `autopilot` command.
 *
 *   autopilot start                 the bundled demo on the offline sandbox (without GitHub App credentials)
 *   autopilot sandbox [options]     run a scenario on the sandbox and write a JSON report
 *   autopilot serve                 the controller app against GitHub (needs App credentials)
 *   autopilot status [options]      a repository's dashboard, or a sandbox report's summary
 *   autopilot init | register | doctor   set a repository up (src/cli/init.ts, register.ts, doctor.ts)
 *
 * Exit codes: 0 success; 1 the scenario ended but did not pass (time limit, unmet expectations, error);
 * 2 usage error or invalid scenario; 3 a part the sandbox needs does not exist yet, or the sandbox is not
 * installed (a production install); 130 interrupted.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { DEFAULT_PRESET, PRESET_NAMES } from "../core/presets/index.js";
import { type CliIo, EXIT, untilInterrupted } from "./cli-io.js";
import { loadSandbox, type SandboxCommands } from "./load-sandbox.js";
import { PACKAGE_ROOT } from "./package-root.js";
import { apiUrl, findToken, hasAppCredentials } from "./setup-context.js";

export { type CliIo, EXIT } from "./cli-io.js";

const defaultIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

const HELP = `autopilot — coding agents over a repository's issues, GitHub-natively

Usage:
  autopilot start                 Without GitHub App credentials: run the bundled demo on the offline
                                  sandbox (about a minute) and print the final dashboard.
  autopilot sandbox [options]     Run a scenario on the offline sandbox.
      --scenario FILE             Scenario file (default: the bundled demo, scenarios/demo.yml)
      --report FILE               Write the JSON report there
      --controller hosted|actions The controller as the hosted app (default: the scenario's
                                  controllers.mode) or as the controller workflow run by Actions
      --quiet                     No progress lines, only the result
      --verbose                   Also print every line the worker runs print
      --keep-workspaces           Keep the runs' workspaces (printed paths) for inspection
      --port P                    (start, sandbox) Serve the live web pages on 127.0.0.1:P (default: any
                                  free port; the URL is printed at the start)
      --keep                      (start, sandbox) Leave the sandbox and its pages up after the run,
                                  until Ctrl-C
  autopilot serve                 Run the controller app against GitHub (APP_ID, PRIVATE_KEY or
                                  PRIVATE_KEY_PATH, WEBHOOK_SECRET; from .env too; without them it
                                  registers the App first, as \`autopilot register\` does, with
                                  WEBHOOK_URL as its webhook URL).
  autopilot status [options]      Show a dashboard.
      --report FILE               Summarize a sandbox report
      --repo OWNER/NAME           Print the repository's Autopilot dashboard (needs GITHUB_TOKEN or
                                  gh's login; GITHUB_API_URL for GitHub Enterprise or the sandbox)
  autopilot init [options]        Set up a repository checkout: workflows pinned to this version,
                                  .github/autopilot.yml, labels (with GITHUB_TOKEN or gh), next steps.
      --mode actions|app          Controller in GitHub Actions (default) or hosted (autopilot serve)
      --dir PATH                  The checkout (default: the current directory)
      --agent NAME                ${PRESET_NAMES.map((name) => (name === DEFAULT_PRESET ? `${name} (default)` : name)).join(", ")}
      --yes                       Take the defaults instead of asking
      --upgrade                   Re-pin and refresh the workflows to this version, keeping the mode,
                                  the agent and .github/autopilot.yml (never rewritten; new settings
                                  are listed)
      --force                     Replace the workflows and issue form that differ (init shows the
                                  difference otherwise); .github/autopilot.yml is never rewritten
      --repo OWNER/NAME           The GitHub repository (default: the origin remote)
      --source OWNER/NAME         Where Autopilot's action is published: the OWNER/NAME of
                                  npx github:OWNER/NAME (asked for when unknown; --yes needs it)
  autopilot register [options]    Register the GitHub App from app.yml (GitHub's manifest flow) and write
                                  APP_ID, PRIVATE_KEY, WEBHOOK_SECRET to .env.
      --org ORG                   Register it for an organization
      --dir PATH                  Where .env goes (default: the current directory)
      --webhook-url URL           Public URL of autopilot serve's /api/github/webhooks (hosted mode)
  autopilot doctor --repo OWNER/NAME [--json]
                                  Check a repository's setup; ✓/✗ with the fix each; exit 0 when all pass.
  autopilot help                  This text.

Exit codes: 0 success, 1 the scenario did not pass, 2 usage error, 3 a part is missing (or the sandbox is
not installed), 130 interrupted.
`;

/**
 * `autopilot serve`: src/app/serve.ts reads the environment (the variables docs/CONTROLLER.md lists, with its
 * defaults) and starts the controller; this waits for Ctrl-C and stops it.
 */
async function serve(io: CliIo): Promise<number> {
  if (!hasAppCredentials(io.env)) {
    const { registerForServe } = await import("./serve-setup.js");
    const registered = await registerForServe(io);
    if (registered !== EXIT.ok) return registered;
  }
  const { serve: startServe } = await import("../app/serve.js");
  let server: Awaited<ReturnType<typeof startServe>>;
  try {
    server = await startServe({
      env: io.env,
      log: { debug: () => {}, info: io.out, warn: io.err, error: io.err },
      handleSignals: false,
    });
  } catch (error) {
    io.err((error as Error).message);
    return EXIT.usage;
  }
  io.out("Ctrl-C stops the controller.");
  await untilInterrupted();
  await server.stop();
  return EXIT.ok;
}

async function status(io: CliIo, options: { report?: string; repo?: string }): Promise<number> {
  if (options.report) {
    const sandbox = await loadSandbox(io);
    return sandbox ? sandbox.summarizeReport(io, options.report) : EXIT.missing;
  }
  if (!options.repo) {
    io.err("autopilot status needs --repo OWNER/NAME (with GITHUB_TOKEN) or --report FILE.");
    return EXIT.usage;
  }
  const token = findToken(io.env);
  if (!token) {
    io.err("autopilot status --repo needs a token: GITHUB_TOKEN (or GH_TOKEN), or `gh auth login`.");
    return EXIT.usage;
  }
  const [owner, repo] = options.repo.split("/");
  if (!owner || !repo) {
    io.err(`--repo expects OWNER/NAME, got "${options.repo}"`);
    return EXIT.usage;
  }
  const { createOctokit } = await import("../github/transport/octokit.js");
  const { listOpenIssues } = await import("../github/setup/open-issues.js");
  const { TRACKING_MARKER } = await import("../core/dashboard/index.js");
  const octokit = createOctokit({ auth: token, baseUrl: apiUrl(io.env) });
  const issues = await listOpenIssues(octokit, owner, repo);
  const tracking = issues.find((issue) => (issue.body ?? "").includes(TRACKING_MARKER));
  if (!tracking) {
    io.out(`${options.repo} has no open Autopilot dashboard (no session has run yet).`);
    return EXIT.ok;
  }
  io.out(`${tracking.title} — ${tracking.html_url}`);
  io.out((tracking.body ?? "").replace(/<!--[\s\S]*?-->/g, "").trim());
  return EXIT.ok;
}

/** `start` and `sandbox`: the harness's command, when the sandbox is installed. */
async function runSandbox(
  io: CliIo,
  options: Parameters<SandboxCommands["runSandboxCommand"]>[1],
): Promise<number> {
  const sandbox = await loadSandbox(io);
  return sandbox ? sandbox.runSandboxCommand(io, options) : EXIT.missing;
}

/** Runs the CLI; resolves with the exit code. */
export async function main(argv: string[] = process.argv.slice(2), io: CliIo = defaultIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.err((error as Error).message);
    io.err("Run `autopilot help` for usage.");
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  const command = positionals[0] ?? "start";
  if (values.help || command === "help") {
    io.out(HELP);
    return EXIT.ok;
  }
  if (values.version) {
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string };
    io.out(pkg.version);
    return EXIT.ok;
  }
  if (positionals.length > 1) {
    io.err(`Unexpected argument: ${positionals[1]}`);
    return EXIT.usage;
  }
  const port = parsePort(values.port);
  if (port instanceof Error) {
    io.err(port.message);
    return EXIT.usage;
  }
  const web = { ...(port !== undefined ? { port } : {}), keep: values.keep ?? false };
  switch (command) {
    case "start":
      if (hasAppCredentials(io.env)) {
        io.out("GitHub App credentials found (APP_ID and a private key).");
        io.out(
          "Run `autopilot serve` to start the controller app against GitHub, and add the worker workflow",
        );
        io.out("to your repository (see README.md). `autopilot sandbox` still runs the offline demo.");
        return EXIT.ok;
      }
      return runSandbox(io, {
        ...(values.report ? { report: values.report } : {}),
        quiet: values.quiet ?? false,
        verbose: values.verbose ?? false,
        title: "No GitHub App credentials: running the bundled demo on the offline sandbox (about a minute).",
        ...web,
      });
    case "sandbox":
      return runSandbox(io, {
        ...(values.scenario ? { scenario: values.scenario } : {}),
        ...(values.report ? { report: values.report } : {}),
        ...(values.controller !== undefined ? { controller: values.controller } : {}),
        quiet: values.quiet ?? false,
        verbose: values.verbose ?? false,
        keepWorkspaces: values["keep-workspaces"] ?? false,
        ...web,
      });
    case "serve":
      return serve(io);
    case "init": {
      const { runInit } = await import("./init.js");
      return runInit(io, {
        ...(values.mode ? { mode: values.mode } : {}),
        ...(values.dir ? { dir: values.dir } : {}),
        ...(values.agent ? { agent: values.agent } : {}),
        ...(values.repo ? { repo: values.repo } : {}),
        ...(values.source ? { source: values.source } : {}),
        yes: values.yes ?? false,
        force: values.force ?? false,
        upgrade: values.upgrade ?? false,
      });
    }
    case "register": {
      const { runRegister } = await import("./register.js");
      return runRegister(io, {
        ...(values.org ? { org: values.org } : {}),
        ...(values.dir ? { dir: values.dir } : {}),
        ...(values["webhook-url"] ? { webhookUrl: values["webhook-url"] } : {}),
      });
    }
    case "doctor": {
      const { runDoctor } = await import("./doctor.js");
      return runDoctor(io, { ...(values.repo ? { repo: values.repo } : {}), json: values.json ?? false });
    }
    case "status":
      return status(io, {
        ...(values.report ? { report: values.report } : {}),
        ...(values.repo ? { repo: values.repo } : {}),
      });
    default:
      io.err(`Unknown command: ${command}`);
      io.err("Run `autopilot help` for usage.");
      return EXIT.usage;
  }
}

/** `--port P`: a TCP port number (0 picks a free one). */
function parsePort(value: string | undefined): number | undefined | Error {
  if (value === undefined) return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535)
    return new Error(`--port expects a port number from 0 to 65535, got "${value}".`);
  return Number(value);
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      scenario: { type: "string" },
      report: { type: "string" },
      repo: { type: "string" },
      quiet: { type: "boolean", short: "q" },
      verbose: { type: "boolean", short: "v" },
      "keep-workspaces": { type: "boolean" },
      controller: { type: "string" },
      // init, register, doctor
      mode: { type: "string" },
      dir: { type: "string" },
      agent: { type: "string" },
      source: { type: "string" },
      org: { type: "string" },
      "webhook-url": { type: "string" },
      yes: { type: "boolean", short: "y" },
      force: { type: "boolean" },
      upgrade: { type: "boolean" },
      json: { type: "boolean" },
      port: { type: "string" },
      keep: { type: "boolean" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean" },
    },
  });
}

// Run when executed (bin/autopilot.js imports this module), not when imported by tests.
const invokedDirectly =
  process.argv[1] !== undefined &&
  (import.meta.url === pathToFileURL(process.argv[1]).href ||
    /bin[\\/]autopilot(\.js)?$/.test(process.argv[1]));
if (invokedDirectly) {
  // Exit explicitly: everything the run started is stopped by then, and nothing left over may keep us alive.
  process.exit(await main());
}
