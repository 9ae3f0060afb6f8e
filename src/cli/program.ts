/**
 * The `autopilot` command line, on commander (https://github.com/tj/commander.js): each subcommand with its own
 * options, help and examples; `-v`/`--version`; an unknown command or option answered with the nearest one
 * ("did you mean"), and an option of another command refused. Every example names the command the user runs
 * (invocation.ts). The actions load their modules only when run, so `--help` loads none of them.
 */
import { Command, InvalidArgumentError, Option } from "commander";
import { DEFAULT_PRESET, PRESET_NAMES } from "../core/presets/index.js";
import type { CliIo } from "./cli-io.js";

/** What a subcommand's action resolves with: the process's exit code. */
type Run = () => Promise<number>;

/** Each subcommand's work, given its parsed options (main.ts wires them to their modules). */
export interface CommandActions {
  start(options: StartOptions): Promise<number>;
  sandbox(options: SandboxOptions): Promise<number>;
  serve(): Promise<number>;
  status(options: { report?: string; repo?: string }): Promise<number>;
  init(options: InitCommandOptions): Promise<number>;
  register(options: { org?: string; dir?: string; webhookUrl?: string }): Promise<number>;
  doctor(options: { repo?: string; json?: boolean }): Promise<number>;
}

export interface StartOptions {
  report?: string;
  quiet?: boolean;
  verbose?: boolean;
  port?: number;
  keep?: boolean;
}

export interface SandboxOptions extends StartOptions {
  scenario?: string;
  controller?: string;
  keepWorkspaces?: boolean;
}

export interface InitCommandOptions {
  mode?: string;
  dir?: string;
  agent?: string;
  yes?: boolean;
  force?: boolean;
  repo?: string;
  source?: string;
  upgrade?: boolean;
}

const EXIT_CODES_HELP = `Exit codes: 0 success, 1 the scenario did not pass (or doctor found a failing check), 2 usage
error, 3 a part is missing (or the sandbox is not installed), 130 interrupted.`;

/** `--port P`: a TCP port number (0 picks a free one). */
function parsePort(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535)
    throw new InvalidArgumentError(`--port expects a port number from 0 to 65535, got "${value}".`);
  return Number(value);
}

/** The "Examples:" block under a command's help: each line `command`, then what it does. */
function examples(cli: string, lines: [string, string][]): string {
  const width = Math.max(...lines.map(([command]) => cli.length + 1 + command.length));
  const rows = lines.map(([command, what]) => `  ${`${cli} ${command}`.padEnd(width)}  ${what}`);
  return `\nExamples:\n${rows.join("\n")}`;
}

/** The options `start` and `sandbox` share. */
function withRunOptions(command: Command): Command {
  return command
    .option("--report <file>", "write the JSON report there")
    .option("-q, --quiet", "no progress lines, only the result")
    .option("--verbose", "also print every line the worker runs print, and the final dashboard's Markdown")
    .option(
      "--port <port>",
      "serve the live web pages on 127.0.0.1:<port> (default: any free port; the URL is printed first)",
      parsePort,
    )
    .option(
      "--keep",
      "leave the sandbox and its pages up after the run, until Ctrl-C, and print the doctor command that rehearses a setup against it",
    );
}

/**
 * The program. `cli` is how the user runs it (`npx github:acme/autopilot`, `node bin/autopilot.js`, …);
 * `finish` receives each action's exit code.
 */
export function buildProgram(
  io: CliIo,
  cli: string,
  version: string,
  actions: CommandActions,
  finish: (run: Run) => Promise<void>,
  /** Commander's error messages, held for main.ts to print with its hint. */
  errors: string[],
): Command {
  const program = new Command()
    .name(cli)
    .description("autopilot — coding agents over a repository's issues, GitHub-natively")
    .version(version, "-v, --version", "print Autopilot's version")
    .helpOption("-h, --help", "show this help")
    .helpCommand("help [command]", "show help for a command")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out(text.replace(/\n$/, "")),
      writeErr: (text) => io.err(text.replace(/\n$/, "")),
      outputError: (text) => errors.push(text.replace(/\n$/, "")),
    })
    .addHelpText(
      "after",
      `${examples(cli, [
        ["start", "the demo on the offline sandbox, no GitHub account needed"],
        ["init", "set up the repository of the current directory"],
        ["register", "register Autopilot's GitHub App"],
        ["doctor", "check the setup of the repository origin points at"],
        ["doctor --help", "a command's options and examples"],
      ])}\n\n${EXIT_CODES_HELP}`,
    );

  withRunOptions(
    program
      .command("start")
      .summary("run the bundled demo on the offline sandbox (about a minute)")
      .description(
        "Without GitHub App credentials: run the bundled demo (scenarios/demo.yml) on the offline sandbox and print the final dashboard.",
      ),
  )
    .addHelpText(
      "after",
      examples(cli, [
        ["start", "the demo, with its live pages at the URL printed first"],
        ["start --port 8080 --keep", "a fixed port; the pages stay up after the run until Ctrl-C"],
      ]),
    )
    .action((options: StartOptions) => finish(() => actions.start(options)));

  withRunOptions(
    program
      .command("sandbox")
      .summary("run a scenario on the offline sandbox")
      .description("Run a scenario on the offline sandbox and print (or write) its report.")
      .option("--scenario <file>", "scenario file (default: the bundled demo, scenarios/demo.yml)")
      .addOption(
        new Option(
          "--controller <mode>",
          "the controller as the hosted app (default: the scenario's controllers.mode) or as the controller workflow run by Actions",
        ).choices(["hosted", "actions"]),
      )
      .option("--keep-workspaces", "keep the runs' workspaces (printed paths) for inspection"),
  )
    .addHelpText(
      "after",
      examples(cli, [
        ["sandbox --scenario scenarios/demo.yml --report out.json", "one scenario, its report written"],
        ["sandbox --controller actions --quiet", "the controller as a workflow run by Actions"],
      ]),
    )
    .action((options: SandboxOptions) => finish(() => actions.sandbox(options)));

  program
    .command("serve")
    .summary("run the controller app against GitHub")
    .description(
      [
        "Run the controller app against GitHub. It reads the App's settings from the environment (and .env):",
        "APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH, WEBHOOK_SECRET; PORT (3000), HOST (127.0.0.1),",
        "GITHUB_API_URL, LOG_LEVEL (warn), LOG_FORMAT (json: one JSON object per log line), and the rest",
        "docs/CONTROLLER.md lists. Without credentials it registers the App first, as `register` does, with",
        "WEBHOOK_URL as its webhook URL.",
      ].join("\n"),
    )
    .addHelpText(
      "after",
      examples(cli, [
        ["serve", "with the credentials `register` wrote to .env (registers the App first without)"],
      ]),
    )
    .action(() => finish(() => actions.serve()));

  program
    .command("status")
    .summary("show a repository's dashboard, or a sandbox report's summary")
    .description("Show a repository's Autopilot dashboard, or summarize a sandbox report.")
    .option("--report <file>", "summarize a sandbox report")
    .option(
      "--repo <owner/name>",
      "print the repository's dashboard (GITHUB_TOKEN or gh's login; GITHUB_API_URL for GitHub Enterprise)",
    )
    .option("--json", "with --repo: one JSON document, the dashboard's session, tasks and history")
    .addHelpText(
      "after",
      examples(cli, [
        ["status --repo acme/shop", "the dashboard of acme/shop"],
        ["status --repo acme/shop --json", "its state, as JSON"],
        ["status --report out.json", "a sandbox run's summary"],
      ]),
    )
    .action((options: { report?: string; repo?: string; json?: boolean }) =>
      finish(() => actions.status(options)),
    );

  program
    .command("init")
    .summary("set up a repository checkout")
    .description(
      "Set up a repository checkout: workflows pinned to this version, .github/autopilot.yml, a task issue form, labels (with GITHUB_TOKEN or gh), and the next steps.",
    )
    // init checks --mode and --agent itself (init.ts), with its own message.
    .option("--mode <mode>", "actions: the controller in GitHub Actions (default); app: hosted (`serve`)")
    .option("--dir <path>", "the checkout (default: the current directory)")
    .option(
      "--agent <name>",
      `the agent CLI: ${PRESET_NAMES.map((name) => (name === DEFAULT_PRESET ? `${name} (default)` : name)).join(", ")}`,
    )
    .option("-y, --yes", "take the defaults instead of asking")
    .option(
      "--force",
      "replace the workflows and issue form that differ (init shows the difference otherwise); .github/autopilot.yml is never rewritten",
    )
    .option(
      "--upgrade",
      "re-pin and refresh the workflows to this version, keeping the mode, the agent and .github/autopilot.yml (never rewritten; new settings are listed)",
    )
    .option("--repo <owner/name>", "the GitHub repository (default: the origin remote)")
    .option(
      "--source <owner/name>",
      "where Autopilot's action is published: the OWNER/NAME of npx github:OWNER/NAME (asked for when unknown; --yes needs it)",
    )
    .addHelpText(
      "after",
      examples(cli, [
        ["init", "asks for the mode and the agent"],
        ["init --yes --agent codex", "the defaults, with Codex as the agent"],
        ["init --upgrade", "after updating Autopilot: its files at this version"],
      ]),
    )
    .action((options: InitCommandOptions) => finish(() => actions.init(options)));

  program
    .command("register")
    .summary("register the GitHub App (manifest flow) and write .env")
    .description(
      "Register the GitHub App from app.yml through GitHub's manifest flow and write APP_ID, PRIVATE_KEY and WEBHOOK_SECRET to .env.",
    )
    .option("--org <org>", "register it for an organization")
    .option("--dir <path>", "where .env goes (default: the current directory)")
    .option("--webhook-url <url>", "public URL of serve's /api/github/webhooks (hosted mode)")
    .addHelpText(
      "after",
      examples(cli, [
        ["register", "an App of your account"],
        [
          "register --org acme --webhook-url https://autopilot.example.com/api/github/webhooks",
          "an organization's App, for a hosted controller",
        ],
      ]),
    )
    .action((options: { org?: string; dir?: string; webhookUrl?: string }) =>
      finish(() => actions.register(options)),
    );

  program
    .command("doctor")
    .summary("check a repository's setup, naming the fix for each problem")
    .description(
      "Check a repository's setup: ✓/✗ per check as it runs, with the fix for each problem; exit 0 when none fails. With APP_ID and PRIVATE_KEY it also checks the App's installation.",
    )
    .option("--repo <owner/name>", "the repository (default: the one the origin remote points at)")
    .option("--json", "one JSON document instead of lines")
    .addHelpText(
      "after",
      examples(cli, [
        ["doctor", "the repository of the current directory's origin"],
        ["doctor --repo acme/shop --json", "acme/shop, as JSON"],
      ]),
    )
    .action((options: { repo?: string; json?: boolean }) => finish(() => actions.doctor(options)));

  return program;
}
