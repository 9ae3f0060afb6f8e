/**
 * `npm run simulate -- --seeds N --from S [--mode hosted|actions|both] [--jobs J] [--out DIR]`: N generated
 * worlds from seed S in each mode, J worlds side by side (child processes), with their counts, worlds per minute
 * and every invariant violation; a failing seed is shrunk and printed as a scenario file that replays it (and
 * written to DIR: what the scheduled workflow .github/workflows/simulate.yml uploads).
 * `npm run simulate -- --replay file.yml [--seed S]` runs one scenario file as a simulated world.
 * `npm run simulate -- --mutant <name|all> [--seeds N]` runs seeds with one check of the product turned off
 * (mutants/mutants.ts) until an invariant fails, and prints the first failing seed and its invariant.
 */
import { fork } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, InvalidArgumentError } from "commander";
import { parse } from "yaml";
import { runWorld, type WorldOutcome } from "./sim-run.js";
import { type Mutant, MUTANTS, mutantChildOptions, mutantNamed } from "./mutants/mutants.js";
import { shrinkWorld, worldYaml } from "./shrink.js";
import { type ControllerMode, generateWorld, type WorldInput } from "./world-generator.js";

const integer = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("a whole number");
  return n;
};

interface Options {
  seeds: number;
  from: number;
  mode: "hosted" | "actions" | "both";
  jobs: number;
  replay?: string;
  seed: number;
  shrink: boolean;
  failFast: boolean;
  invariant?: string;
  out?: string;
  mutant?: string;
  child?: string;
}

const program = new Command("simulate")
  .description("Seeded simulation of Autopilot on the sandbox, with invariants (docs/ARCHITECTURE.md).")
  .option("--seeds <n>", "how many seeds", integer, 10)
  .option("--from <s>", "first seed", integer, 1)
  .option("--mode <mode>", "controller mode: hosted, actions or both", "both")
  .option("--jobs <j>", "worlds side by side", integer, 2)
  .option("--replay <file>", "run this scenario file as one world")
  .option("--seed <s>", "with --replay: the seed of the run's own choices", integer, 1)
  .option("--no-shrink", "print a failing world as generated, without shrinking it")
  .option("--fail-fast", "stop at the first failing world", false)
  .option("--invariant <name>", "count only this invariant's violations as failures (the others are printed)")
  .option("--out <dir>", "also write each failing seed's scenario file there, as seed-<seed>-<mode>.yml")
  .option(
    "--mutant <name>",
    `run seeds with one check turned off until one fails: all, ${MUTANTS.map((m) => m.name).join(", ")}`,
  )
  .option("--child <range>", "internal: run seeds a..b of one mode and report on IPC");

function line(seed: number, o: WorldOutcome, ms: number): string {
  const c = o.counts;
  const verdict = o.violations.length
    ? `FAIL ${o.violations.map((v) => `${v.invariant} @${v.atSeconds}s: ${v.detail}`).join("; ")}`
    : "ok";
  return `seed ${seed} ${o.mode}: ${c.tasks} tasks, ${c.events} events, ${c.faults} faults, ${c.reconciles} reconciles, ${c.dispatches} dispatches, ${c.merges} merges, ${c.planRuns}/${c.approvedPlanRuns} plans proposed/approved runs, ${c.roundCommands} fix/follow-up/rollback, ${c.budgetStops} budget stops, ${c.candidates} best-of candidates, ${c.botWords} bots' words, ${o.simulatedSeconds}s simulated, ${ms} ms — ${verdict}`;
}

async function child(range: string): Promise<void> {
  const [mode, a, b] = range.split(":") as [ControllerMode, string, string];
  for (let seed = Number(a); seed <= Number(b); seed++) {
    const started = Date.now();
    const outcome = await runWorld(generateWorld(seed, mode), seed);
    process.send?.({ seed, outcome, ms: Date.now() - started });
  }
}

interface Failure {
  seed: number;
  mode: ControllerMode;
  outcome: WorldOutcome;
}

async function batch(options: Options, mutant?: Mutant): Promise<{ failures: Failure[]; worlds: number }> {
  const modes: ControllerMode[] = options.mode === "both" ? ["hosted", "actions"] : [options.mode];
  const ranges: string[] = [];
  const jobs = Math.max(1, options.jobs);
  for (const mode of modes) {
    // A mutant's hunt goes in small steps, so that the first failing seed found is one of the first seeds.
    const per = mutant ? Math.min(5, options.seeds) : Math.ceil(options.seeds / jobs);
    for (let start = options.from; start < options.from + options.seeds; start += per)
      ranges.push(`${mode}:${start}:${Math.min(start + per, options.from + options.seeds) - 1}`);
  }
  const started = Date.now();
  const failures: Failure[] = [];
  let worlds = 0;
  let events = 0;
  let faults = 0;
  const self = fileURLToPath(import.meta.url);
  const queue = [...ranges];
  const procs = new Set<ReturnType<typeof fork>>();
  const runNext = async (): Promise<void> => {
    const range = queue.shift();
    if (!range) return;
    await new Promise<void>((resolve, reject) => {
      const withMutant = mutant ? mutantChildOptions(mutant) : null;
      const proc = fork(self, ["--child", range], {
        // The mutant's hook goes before tsx's, so that it rewrites the TypeScript tsx then compiles.
        execArgv: withMutant ? ["--import", withMutant.importUrl, "--import", "tsx"] : ["--import", "tsx"],
        ...(withMutant ? { env: withMutant.env } : {}),
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      procs.add(proc);
      proc.on("message", (m: { seed: number; outcome: WorldOutcome; ms: number }) => {
        worlds++;
        events += m.outcome.counts.events;
        faults += m.outcome.counts.faults;
        console.log(line(m.seed, m.outcome, m.ms));
        if (!m.outcome.violations.some((v) => !options.invariant || v.invariant === options.invariant))
          return;
        failures.push({ seed: m.seed, mode: m.outcome.mode, outcome: m.outcome });
        if (options.failFast || mutant) {
          queue.length = 0;
          // SIGKILL: the product's code in a child may keep it alive on SIGTERM.
          for (const other of procs) other.kill("SIGKILL");
        }
      });
      proc.on("exit", (code, signal) => {
        procs.delete(proc);
        if (code === 0 || (signal && (options.failFast || mutant) && failures.length)) resolve();
        else reject(new Error(`simulation of ${range} exited with ${code ?? signal}`));
      });
    });
    await runNext();
  };
  await Promise.all(Array.from({ length: Math.min(jobs, ranges.length) }, () => runNext()));
  const minutes = (Date.now() - started) / 60_000;
  console.log(
    `${worlds} worlds (${events} events, ${faults} faults) in ${(minutes * 60).toFixed(0)} s: ${(worlds / minutes).toFixed(1)} worlds per minute with ${jobs} side by side; ${failures.length} failed`,
  );
  if (mutant) return { failures, worlds };
  for (const failure of failures) {
    const world = generateWorld(failure.seed, failure.mode);
    const invariant = failure.outcome.violations[0]!.invariant;
    const shrunk = options.shrink
      ? await shrinkWorld(world, invariant, (w) => runWorld(w, failure.seed))
      : world;
    console.log(
      `\n--- seed ${failure.seed} (${failure.mode}) fails ${invariant}; a scenario that replays it:\n`,
    );
    const yaml = worldYaml(shrunk, failure.seed, failure.outcome.violations[0]!.detail);
    console.log(yaml);
    if (options.out) {
      mkdirSync(options.out, { recursive: true });
      writeFileSync(join(options.out, `seed-${failure.seed}-${failure.mode}.yml`), yaml);
    }
  }
  return { failures, worlds };
}

/**
 * Each mutant's hunt: seeds from `--from` until an invariant fails or `--seeds` have passed. Exit code 1 when a
 * mutant survived them all: the invariants or the generated worlds miss the check it turns off.
 */
async function hunt(options: Options): Promise<number> {
  const chosen = options.mutant === "all" ? MUTANTS : [mutantNamed(options.mutant ?? "")];
  if (chosen.some((m) => !m)) {
    console.error(`no mutant "${options.mutant}"; there are: all, ${MUTANTS.map((m) => m.name).join(", ")}`);
    return 2;
  }
  const rows: string[] = [];
  let survivors = 0;
  for (const mutant of chosen as Mutant[]) {
    console.log(`\n=== mutant ${mutant.name}: ${mutant.subject} turned off (${mutant.file})`);
    const { failures, worlds } = await batch(options, mutant);
    const first = failures.sort((a, b) => a.seed - b.seed)[0];
    if (!first) survivors++;
    const v = first?.outcome.violations[0];
    rows.push(
      first && v
        ? `${mutant.name}: caught at seed ${first.seed} (${first.mode}) by ${v.invariant} after ${worlds} worlds — ${v.detail}`
        : `${mutant.name}: SURVIVED ${worlds} worlds (expected ${mutant.caughtBy})`,
    );
  }
  console.log(`\n${rows.join("\n")}`);
  return survivors ? 1 : 0;
}

async function replay(file: string, seed: number): Promise<number> {
  const world = parse(readFileSync(file, "utf8")) as WorldInput;
  const started = Date.now();
  const outcome = await runWorld(world, seed);
  console.log(line(seed, outcome, Date.now() - started));
  return outcome.violations.length ? 1 : 0;
}

const options = program.parse().opts<Options>();
if (options.child) await child(options.child);
else if (options.replay) process.exitCode = await replay(options.replay, options.seed);
else if (options.mutant) process.exitCode = await hunt(options);
else process.exitCode = (await batch(options)).failures.length ? 1 : 0;
