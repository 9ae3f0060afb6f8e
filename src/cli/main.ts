/**
 * The `autopilot` command: its subcommands and their options are in program.ts; this runs one of them and
 * answers with its exit code.
 *
 *   autopilot start                 the bundled demo on the offline sandbox (without GitHub App credentials)
 *   autopilot sandbox [options]     run a scenario on the sandbox and write a JSON report
 *   autopilot serve                 the controller app against GitHub (needs App credentials)
 *   autopilot status [options]      a repository's dashboard, or a sandbox report's summary
 *   autopilot init | register | doctor   set a repository up (src/cli/init.ts, register.ts, doctor.ts)
 *
 * A bare `autopilot` prints the help (the demo is `autopilot start`, what `npm start` runs).
 * Exit codes: 0 success; 1 the scenario ended but did not pass (time limit, unmet expectations, error);
 * 2 usage error or invalid scenario; 3 a part the sandbox needs does not exist yet, or the sandbox is not
 * installed (a production install); 130 interrupted.
 */
import { pathToFileURL } from "node:url";
import { type Command, CommanderError } from "commander";
import { type CliIo, EXIT } from "./cli-io.js";
import { currentInvocation } from "./invocation.js";
import { loadSandbox, type SandboxCommands } from "./load-sandbox.js";
import { buildProgram, type CommandActions } from "./program.js";
import { currentRelease, hasAppCredentials } from "./setup-context.js";

export { type CliIo, EXIT } from "./cli-io.js";

const defaultIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

/** `start` and `sandbox`: the harness's command, when the sandbox is installed. */
async function runSandbox(
  io: CliIo,
  options: Parameters<SandboxCommands["runSandboxCommand"]>[1],
): Promise<number> {
  const sandbox = await loadSandbox(io);
  return sandbox ? sandbox.runSandboxCommand(io, options) : EXIT.missing;
}

/** What each subcommand runs; each loads its module only when it runs. */
function commandActions(io: CliIo, cli: string): CommandActions {
  const web = (options: { port?: number; keep?: boolean }) => ({
    ...(options.port !== undefined ? { port: options.port } : {}),
    keep: options.keep ?? false,
    cli,
  });
  return {
    async start(options) {
      if (hasAppCredentials(io.env)) {
        io.out("GitHub App credentials found (APP_ID and a private key).");
        io.out(
          `Run \`${cli} serve\` to start the controller app against GitHub, and add the worker workflow`,
        );
        io.out(`to your repository (see README.md). \`${cli} sandbox\` still runs the offline demo.`);
        return EXIT.ok;
      }
      return runSandbox(io, {
        ...(options.report ? { report: options.report } : {}),
        quiet: options.quiet ?? false,
        verbose: options.verbose ?? false,
        title: "No GitHub App credentials: running the bundled demo on the offline sandbox (about a minute).",
        ...web(options),
      });
    },
    sandbox: (options) =>
      runSandbox(io, {
        ...(options.scenario ? { scenario: options.scenario } : {}),
        ...(options.report ? { report: options.report } : {}),
        ...(options.controller !== undefined ? { controller: options.controller } : {}),
        quiet: options.quiet ?? false,
        verbose: options.verbose ?? false,
        keepWorkspaces: options.keepWorkspaces ?? false,
        ...web(options),
      }),
    async serve() {
      const { serveCommand } = await import("./serve-command.js");
      return serveCommand(io);
    },
    async status(options) {
      const { statusCommand } = await import("./status-command.js");
      return statusCommand(io, options);
    },
    async init(options) {
      const { runInit } = await import("./init.js");
      // `upgrade` is init's own (init.ts gives it its meaning); passed through like the rest.
      const initOptions = {
        ...(options.mode ? { mode: options.mode } : {}),
        ...(options.dir ? { dir: options.dir } : {}),
        ...(options.agent ? { agent: options.agent } : {}),
        ...(options.repo ? { repo: options.repo } : {}),
        ...(options.source ? { source: options.source } : {}),
        yes: options.yes ?? false,
        force: options.force ?? false,
        upgrade: options.upgrade ?? false,
      };
      return runInit(io, initOptions);
    },
    async register(options) {
      const { runRegister } = await import("./register.js");
      return runRegister(io, {
        ...(options.org ? { org: options.org } : {}),
        ...(options.dir ? { dir: options.dir } : {}),
        ...(options.webhookUrl ? { webhookUrl: options.webhookUrl } : {}),
      });
    },
    async doctor(options) {
      const { runDoctor } = await import("./doctor.js");
      return runDoctor(io, { ...(options.repo ? { repo: options.repo } : {}), json: options.json ?? false });
    },
  };
}

/**
 * Commander's message, and where to read more. An option of another command is named as such, without
 * commander's guess at a similar option of this one.
 */
function usageError(program: Command, argv: string[], error: CommanderError, message: string, cli: string) {
  const command = program.commands.find((c) => argv.includes(c.name()));
  const flag = /unknown option '([^']+)'/.exec(error.message)?.[1]?.split("=")[0];
  const owners = flag
    ? program.commands.filter(
        (c) => c !== command && c.options.some((o) => o.long === flag || o.short === flag),
      )
    : [];
  const help = `Run \`${cli}${command ? ` ${command.name()}` : ""} --help\` for usage.`;
  if (!command || owners.length === 0) return [message, help];
  const names = owners.map((c) => `\`${c.name()}\``).join(" and ");
  return [
    message.replace(/\n\(Did you mean [^)]*\)$/, ""),
    `${flag} is an option of ${names}, not of \`${command.name()}\`.`,
    help,
  ];
}

/** Runs the CLI; resolves with the exit code. */
export async function main(argv: string[] = process.argv.slice(2), io: CliIo = defaultIo): Promise<number> {
  const release = currentRelease(io.env);
  const cli = currentInvocation(io.env, release.source);
  let code: number = EXIT.ok;
  const errors: string[] = [];
  const finish = async (run: () => Promise<number>) => {
    code = await run();
  };
  const program = buildProgram(io, cli, release.version, commandActions(io, cli), finish, errors);
  if (argv.length === 0) {
    program.outputHelp();
    return EXIT.ok;
  }
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.exitCode === 0) return EXIT.ok; // --help, --version, help
    for (const line of usageError(program, argv, error, errors.join("\n"), cli)) io.err(line);
    return EXIT.usage;
  }
  return code;
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
