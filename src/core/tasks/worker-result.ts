/**
 * The worker's machine-readable result, kept as a hidden marker at the end of its progress comment on the
 * task issue. The worker writes it; the controller reads it. Validated with zod on both sides.
 */
import { z } from "zod";

export const WORKER_OUTCOMES = [
  "complete",
  "blocked",
  "needs_human",
  "timeout",
  "stuck",
  "contradiction",
  "failed",
  "paused",
  "rate_limited",
  "usage_limited",
  "budget_exceeded",
  "auth",
  "quota",
  "claimed_elsewhere",
  "config_refused",
] as const;

export const WorkerOutcomeSchema = z.enum(WORKER_OUTCOMES);
export type WorkerOutcome = z.infer<typeof WorkerOutcomeSchema>;

export const HumanGateHitSchema = z.object({
  rule: z.string(),
  where: z.enum(["diff", "path", "command"]),
  match: z.string(),
  /** True when the rule is on the never-auto-approve list. */
  neverAutoApprove: z.boolean().default(false),
});
export type HumanGateHit = z.infer<typeof HumanGateHitSchema>;

export const WorkerResultSchema = z.object({
  version: z.literal(1),
  issue: z.number().int().positive(),
  attempt: z.number().int().positive(),
  dispatchId: z.string().min(1),
  status: z.enum(["running", "finished"]),
  result: WorkerOutcomeSchema.optional(),
  reason: z.string().optional(),
  iterations: z.number().int().nonnegative(),
  maxIterations: z.number().int().positive(),
  commits: z.number().int().nonnegative(),
  headSha: z.string().optional(),
  branch: z.string(),
  prNumber: z.number().int().positive().optional(),
  lastSignal: z.string().optional(),
  tokens: z.object({ input: z.number().nonnegative(), output: z.number().nonnegative() }),
  costUsd: z.number().nonnegative(),
  /** When a usage limit or rate limit ended the job: the earliest time to resume (ISO 8601). */
  resumeAt: z.string().optional(),
  humanGate: z.object({ fired: z.boolean(), rules: z.array(HumanGateHitSchema) }),
  /** The reviewer's runs in this job (`review`) and their share of `tokens` and `costUsd`. */
  review: z
    .object({
      runs: z.number().int().positive(),
      tokens: z.number().nonnegative(),
      costUsd: z.number().nonnegative(),
    })
    .optional(),
  /**
   * A planning run's plan (the plan gate): the digest of the plan it posted on the issue, and when GitHub says it
   * posted it (its comment's `created_at`): an approval written before then was not of this plan.
   */
  plan: z
    .object({ digest: z.string().regex(/^[0-9a-f]{64}$/), postedAt: z.iso.datetime().optional() })
    .optional(),
  /** Set with a wall weaker than the default (`isolation: uid` or `none`): in one line, what it could reach. */
  agentAccess: z.string().max(300).optional(),
  /** Set when the agent's network is not the enforced firewall (`network: open`, or no network namespace). */
  networkAccess: z.string().max(300).optional(),
  /** Hosts the egress proxy refused, most refused first: what the maintainer may add to `network.allow`. */
  refusedHosts: z
    .array(z.object({ host: z.string().max(300), count: z.number().int().positive() }))
    .max(20)
    .optional(),
  /**
   * The agent in use when the worker last wrote (its preset, and its model in parentheses when set), and why it
   * is not the primary: "claude is rate limited: backoff 3 of 3", with the agent it left. The dashboard's
   * Running table and the `agent-switched` webhook event read it (src/core/reconcile/runs/agent-switches.ts).
   */
  agent: z
    .object({
      name: z.string().min(1).max(120),
      fallback: z.string().max(300).nullable(),
      from: z.string().max(60).nullable(),
    })
    .optional(),
  startedAt: z.string(),
  updatedAt: z.string(),
});
export type WorkerResult = z.infer<typeof WorkerResultSchema>;
/** The agent a worker reports it runs, and why it fell back (the result's `agent`). */
export type WorkerAgent = NonNullable<WorkerResult["agent"]>;

/** What an agent run without isolation (`isolation: none`) can reach, in one line (job summary, dashboard). */
export const UNISOLATED_AGENT_ACCESS =
  "isolation: none — the agent runs as the worker's own user: it can read the worker's GitHub token (its " +
  "process environment), git configuration and files, and push with that token.";

/** The agent's network with `network: open`, in one line (job summary, dashboard). */
export const OPEN_NETWORK_ACCESS =
  "network: open — the agent reaches every host the runner reaches: any server to send the code or its keys " +
  "to, the runner's own loopback services and the cloud metadata service.";

/** The agent's network without a network namespace (`isolation: uid` or `none`), in one line. */
export const UNENFORCED_NETWORK_ACCESS =
  "network allow-list not enforced — without a network namespace around the agent the egress proxy is only " +
  "offered (HTTP_PROXY): the agent can connect to any host directly.";

/** What an agent behind the separate user only (`isolation: uid`, the weaker wall) can reach, in one line. */
const UID_ONLY_AGENT_ACCESS =
  "isolation: uid (weaker than the default namespace sandbox) — the agent runs as a separate user without a " +
  "namespace: it sees the host's processes, reads every file that user may read, writes where any user may " +
  "(/tmp) and has the host's network.";

/** The line naming a weaker wall than the default (`namespace`), or undefined for the default. */
export function weakerIsolationText(isolation: "namespace" | "uid" | "none"): string | undefined {
  if (isolation === "none") return UNISOLATED_AGENT_ACCESS;
  if (isolation === "uid") return UID_ONLY_AGENT_ACCESS;
  return undefined;
}

const MARKER_PREFIX = "<!-- autopilot:worker-result v1 ";
const MARKER_SUFFIX = " -->";

/** Renders the hidden marker. JSON cannot contain "-->" after escaping '>' so the comment cannot be closed early. */
export function renderWorkerResultMarker(result: WorkerResult): string {
  const json = JSON.stringify(WorkerResultSchema.parse(result)).replace(/>/g, "\\u003e");
  return `${MARKER_PREFIX}${json}${MARKER_SUFFIX}`;
}

/** Finds and validates the marker in a comment body; null when absent or invalid (never throws). */
export function parseWorkerResult(body: string): WorkerResult | null {
  const start = body.lastIndexOf(MARKER_PREFIX);
  if (start < 0) return null;
  const end = body.indexOf(MARKER_SUFFIX, start + MARKER_PREFIX.length);
  if (end < 0) return null;
  try {
    const parsed = WorkerResultSchema.safeParse(JSON.parse(body.slice(start + MARKER_PREFIX.length, end)));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
