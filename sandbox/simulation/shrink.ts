/**
 * Shrinking a failing world, as property-based testers do: drop one timeline event, one fault, the plan gate, the
 * budgets, the second controller, one task (made inert: no ready label, no agent run, so the numbering of the
 * others holds) or one person at a time, and keep each drop after which the same invariant still fails. The result prints as a
 * scenario file (the scenario format of sandbox/scenario/scenario-file.ts).
 */
import { stringify } from "yaml";
import type { WorldOutcome } from "./sim-run.js";
import type { WorldInput } from "./world-generator.js";

type RunWorld = (world: WorldInput) => Promise<WorldOutcome>;

/** Candidate worlds one step smaller than `world`. */
function smaller(world: WorldInput): WorldInput[] {
  const out: WorldInput[] = [];
  const timeline = world.timeline ?? [];
  for (let i = timeline.length - 1; i >= 0; i--)
    out.push({ ...world, timeline: timeline.filter((_, j) => j !== i) });
  if (world.faults) out.push({ ...world, faults: undefined });
  const config = world.repo?.config;
  if (config && typeof config === "object" && "planGate" in config) {
    const { planGate: _, ...rest } = config;
    out.push({ ...world, repo: { ...world.repo, config: rest } });
  }
  if (config && typeof config === "object" && "budgets" in config) {
    const { budgets: _, ...rest } = config;
    out.push({ ...world, repo: { ...world.repo, config: rest } });
  }
  if (world.controllers?.instances === 2)
    out.push({ ...world, controllers: { ...world.controllers, instances: 1 } });
  world.issues.forEach((issue, i) => {
    if (!issue.labels?.length && !issue.dependsOn?.length) return;
    const issues = world.issues.map((other, j) =>
      j === i ? { title: other.title, labels: [], author: other.author } : other,
    );
    out.push({ ...world, issues });
  });
  const used = JSON.stringify([world.issues, world.timeline]);
  for (const user of world.users ?? []) {
    if (user.login === "alice" || used.includes(`"${user.login}"`)) continue;
    out.push({ ...world, users: (world.users ?? []).filter((u) => u !== user) });
  }
  return out;
}

/** The smallest world found that still fails `invariant`, trying at most `budget` runs. */
export async function shrinkWorld(
  world: WorldInput,
  invariant: string,
  run: RunWorld,
  budget = 40,
): Promise<WorldInput> {
  let current = world;
  let runs = 0;
  for (let progress = true; progress && runs < budget; ) {
    progress = false;
    for (const candidate of smaller(current)) {
      if (runs++ >= budget) break;
      const outcome = await run(candidate);
      if (outcome.violations.some((v) => v.invariant === invariant)) {
        current = candidate;
        progress = true;
        break;
      }
    }
  }
  return current;
}

/** The world as a scenario file that replays it (`npm run simulate -- --replay <file> --seed <seed>`). */
export function worldYaml(world: WorldInput, seed: number, why: string): string {
  const header = `# Found by the seeded simulation (seed ${seed}): ${why}\n# Replay: npm run simulate -- --replay <this file> --seed ${seed}\n`;
  return header + stringify(JSON.parse(JSON.stringify(world)) as unknown, { lineWidth: 0 });
}
