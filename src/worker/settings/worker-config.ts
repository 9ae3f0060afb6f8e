/**
 * Which `.github/autopilot.yml` the worker runs under: never one looser than the controller's. The controller
 * passes the digest of the configuration it decided with (`config-digest`); the worker takes the file of its
 * checkout (the default branch) when its digest matches, else the last good configuration in the tracking
 * issue's state when that digest matches (the file went bad, or changed, after the controller decided), and
 * otherwise refuses before any agent runs.
 *
 * Without the input (a run started by hand) the worker takes the file when it is valid, else the state's last
 * good configuration, else refuses: a bad file never means the defaults.
 */
import {
  type AutopilotConfig,
  type ConfigError,
  configDigest,
  type LastGoodConfig,
  lastGoodConfig,
  parseConfig,
} from "../../core/config/index.js";
import { parseDashboard } from "../../core/dashboard/index.js";

type WorkerConfigChoice =
  | { ok: true; config: AutopilotConfig; warnings: string[]; source: "file" | "last-good"; digest: string }
  | { ok: false; reason: string };

export interface WorkerConfigSources {
  /** The file in the checkout; null when there is none. */
  fileText: string | null;
  /** The `config-digest` input; null when not given. */
  expectedDigest: string | null;
  /** The tracking issue's body; null when there is none (or no `tracking-issue` input). */
  readTrackingBody: () => Promise<string | null>;
  /** The file at a commit (when the state kept only the last good configuration's commit). */
  readConfigAt: (commit: string) => Promise<string | null>;
}

export async function chooseWorkerConfig(sources: WorkerConfigSources): Promise<WorkerConfigChoice> {
  const { fileText, expectedDigest } = sources;
  const fileDigest = configDigest(fileText);
  const parsed = parseConfig(fileText);
  if (parsed.ok && (expectedDigest === null || fileDigest === expectedDigest)) {
    return { ok: true, config: parsed.config, warnings: parsed.warnings, source: "file", digest: fileDigest };
  }

  const known = await readLastGood(sources);
  const wanted = expectedDigest ?? known?.digest ?? null;
  if (known && known.digest === wanted) {
    const text =
      known.text === undefined && known.commit ? await sources.readConfigAt(known.commit) : undefined;
    const config = lastGoodConfig(known, text);
    if (config) return { ok: true, config, warnings: [], source: "last-good", digest: known.digest };
  }
  return { ok: false, reason: refusal(expectedDigest, fileDigest, parsed.ok ? null : parsed.error, known) };
}

async function readLastGood(sources: WorkerConfigSources): Promise<LastGoodConfig | null> {
  const body = await sources.readTrackingBody();
  return body === null ? null : (parseDashboard(body).state?.lastGoodConfig ?? null);
}

function refusal(
  expected: string | null,
  fileDigest: string,
  error: ConfigError | null,
  known: LastGoodConfig | null,
): string {
  const short = (digest: string) => digest.slice(0, 12);
  const problem = error
    ? `.github/autopilot.yml is invalid (${error.message.split("\n")[1]?.replace(/^- /, "") ?? "see the file"})`
    : null;
  if (expected === null) {
    return `not starting: ${problem ?? ".github/autopilot.yml could not be used"} and the tracking issue keeps no last good configuration; fix the file`;
  }
  const seen = [`the checkout's file has digest ${short(fileDigest)}${problem ? ` and ${problem}` : ""}`];
  seen.push(
    known
      ? `the tracking issue's last good configuration has digest ${short(known.digest)}`
      : "the tracking issue keeps no last good configuration",
  );
  return `not starting: the controller decided with configuration ${short(expected)}, but ${seen.join(", ")}; the controller dispatches the task again with the configuration it has now`;
}
