/**
 * The worker's `config` input: per-job overrides of .github/autopilot.yml. Whoever can dispatch the worker
 * workflow can set it, so it takes exactly the keys the controller's own overrides take (the dashboard's
 * `JobOverridesSchema`: session size, labels, dry run, and the task's iteration limit that
 * `/autopilot retry #N --iterations M` raised). Anything that loosens safety — agent commands and
 * presets, the human gate, isolation, quality commands — comes only from the configuration file on the default
 * branch; naming one here is an error that says where to set it instead.
 */
import {
  type AutopilotConfig,
  applyConfigOverrides,
  ConfigError,
  type ConfigResult,
} from "../../core/config/index.js";
import { JobOverridesSchema } from "../../core/dashboard/index.js";

const SAFE_OVERRIDE_KEYS: readonly string[] = JobOverridesSchema.keyof().options;

export function applyWorkerOverrides(
  config: AutopilotConfig,
  text: string,
  source = "the `config` input",
): ConfigResult {
  if (text.trim() === "") return { ok: true, config, warnings: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // applyConfigOverrides words the JSON error the same way for every source.
    return applyConfigOverrides(config, text, source);
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const refused = Object.keys(value).filter((key) => !SAFE_OVERRIDE_KEYS.includes(key));
    if (refused.length > 0) {
      const allowed = SAFE_OVERRIDE_KEYS.map((key) => `\`${key}\``).join(", ");
      return {
        ok: false,
        error: new ConfigError(
          source,
          refused.map((key) => ({
            path: key,
            found: "a per-job override",
            expected: `one of ${allowed}`,
            message:
              `\`${key}\` cannot be overridden per job (only ${allowed} can): set \`${key}\` in ` +
              ".github/autopilot.yml on the default branch",
          })),
        ),
      };
    }
    const checked = JobOverridesSchema.safeParse(value);
    if (!checked.success) {
      return {
        ok: false,
        error: new ConfigError(
          source,
          checked.error.issues.map((issue) => ({
            path: issue.path.join("."),
            found: "an invalid value",
            expected: issue.message,
            message: `\`${issue.path.join(".")}\`: ${issue.message}`,
          })),
        ),
      };
    }
    // What the plan gate and best of N ask of this job are not settings of the configuration (`jobDirections`).
    const { plan: _plan, candidate: _candidate, ...settings } = value as Record<string, unknown>;
    value = settings;
  }
  return applyConfigOverrides(config, value, source);
}

/**
 * What the controller asks of this job, from the same `config` input: the plan gate's `plan` (`propose`, a
 * planning run, or the digest of the approved plan to implement) and best of N's `candidate` (which candidate
 * of the round this job is). Read after `applyWorkerOverrides` accepted the input.
 */
export function jobDirections(text: string): { plan: string | null; candidate: number | null } {
  const none = { plan: null, candidate: null };
  if (text.trim() === "") return none;
  try {
    const checked = JobOverridesSchema.safeParse(JSON.parse(text));
    if (!checked.success) return none;
    return { plan: checked.data.plan ?? null, candidate: checked.data.candidate ?? null };
  } catch {
    return none;
  }
}
