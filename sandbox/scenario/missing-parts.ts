/**
 * What a scenario run needs before anything starts: the controller app (src/app/hosted/http-server.ts) and the bundled
 * worker action. `findMissingParts` lists what is not there yet, so the run can say so instead of failing late.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseYaml } from "yaml";
import { PACKAGE_ROOT } from "../../src/cli/package-root.js";
import { trustedBinary } from "../../src/worker/isolation/trusted-binaries.js";

/** What the runner needs of the controller app (src/app/hosted/http-server.ts). */
export interface ControllerServer {
  url: string;
  /** The webhook endpoint, when it is not `url` itself. */
  webhookUrl?: string;
  stop(): Promise<void> | void;
  tick(): Promise<unknown> | unknown;
  /** Resolves when no reconcile is running or waiting (the run's settle check waits for it). */
  idle?(): Promise<void>;
}

export interface ControllerServerOptions {
  appId: number;
  privateKey: string;
  webhookSecret: string;
  baseUrl: string;
  port: number;
  tickMs: number;
  /** The environment `alerts.webhook`'s variables are read from (the scenario's alert receiver). */
  alertEnv?: Record<string, string>;
}

export type StartControllerServer = (options: ControllerServerOptions) => Promise<ControllerServer>;

/** Thrown before anything starts when a part the scenario needs does not exist yet. */
export class MissingPartsError extends Error {
  override readonly name = "MissingPartsError";
  constructor(readonly missing: string[]) {
    super(`The sandbox cannot run the scenario yet; missing:\n${missing.map((m) => `  - ${m}`).join("\n")}`);
  }
}

const CONTROLLER_MODULE = join(PACKAGE_ROOT, "src", "app", "hosted", "http-server.ts");

/**
 * Lists what is missing to run scenarios: the controller app, the bundled worker action, and bubblewrap, which
 * the worker runs every agent in (`isolation: namespace`, the default; without it each worker would refuse to
 * start and the scenario would only time out); a scenario whose configuration chooses another wall (the demo on
 * a machine without it: demo-isolation.ts) does not need it. `findBinary` is for tests.
 */
export async function findMissingParts(
  actionDir = PACKAGE_ROOT,
  startController?: StartControllerServer,
  findBinary: (name: string) => string | null = trustedBinary,
  needsNamespace = true,
): Promise<{ missing: string[]; startController: StartControllerServer | null }> {
  const missing: string[] = [];
  if (needsNamespace && !findBinary("bwrap")) {
    missing.push(
      "bubblewrap (bwrap), the namespace sandbox the worker runs each agent in: install it " +
        "(`apt-get install bubblewrap` on Debian or Ubuntu) and run again as root or with password-less sudo",
    );
  }
  let factory: StartControllerServer | null = startController ?? null;
  if (!factory) {
    if (!existsSync(CONTROLLER_MODULE)) {
      missing.push(
        "the controller app: src/app/hosted/http-server.ts exporting startControllerServer({ appId, privateKey, webhookSecret, baseUrl, port, tickMs }) → { url, stop(), tick() }",
      );
    } else {
      try {
        const mod = (await import(pathToFileURL(CONTROLLER_MODULE).href)) as {
          startControllerServer?: unknown;
        };
        if (typeof mod.startControllerServer === "function")
          factory = mod.startControllerServer as StartControllerServer;
        else
          missing.push(
            "the controller app: src/app/hosted/http-server.ts does not export a startControllerServer function",
          );
      } catch (error) {
        missing.push(
          `the controller app: src/app/hosted/http-server.ts fails to load: ${(error as Error).message.split("\n")[0]}`,
        );
      }
    }
  }
  const manifest = ["action.yml", "action.yaml"].map((f) => join(actionDir, f)).find((p) => existsSync(p));
  if (!manifest) {
    missing.push(`the worker action: ${join(actionDir, "action.yml")} does not exist`);
  } else {
    let main = "dist/worker/index.js";
    try {
      const parsed = parseYaml(readFileSync(manifest, "utf8")) as {
        runs?: { main?: string };
      };
      main = parsed?.runs?.main ?? main;
    } catch {
      // keep the default
    }
    if (!existsSync(join(actionDir, main))) {
      missing.push(
        `the worker bundle: ${join(actionDir, main)} does not exist${existsSync(join(PACKAGE_ROOT, "src", "worker", "worker-entry.ts")) ? " (build it with `npm run bundle`)" : " (src/worker/worker-entry.ts is not written yet)"}`,
      );
    }
  }
  return { missing, startController: factory };
}
