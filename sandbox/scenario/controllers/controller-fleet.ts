/**
 * Controllers for fault scenarios (scenarios/faults-*.yml):
 *
 * - `ControllerFleet` runs the controller as one or more separate processes (sandbox/scenario/controllers/controller-child.ts)
 *   on the same GitHub state: every webhook goes to every live instance (a fan-out endpoint the sandbox
 *   delivers to), each instance reaches the API through its own pass-through proxy that counts its writes, so
 *   an instance can be SIGKILLed right after its Nth write — mid-reconcile, between two effects — and a fresh
 *   process started in its place (nothing of the old process's memory survives, as after a crash).
 *   With `sharedWork` the instances are replicas sharing their work through a Redis server started here
 *   (src/app/hosted/replica-work.ts), and each webhook goes to one live instance in turn, as a load balancer sends it.
 * - `sendBadSignatureWebhook` posts a webhook signed with the wrong secret to a controller and returns the answer.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type RedisServer, startRedis } from "./redis-server.js";

interface FleetControllerOptions {
  appId: number;
  privateKey: string;
  webhookSecret: string;
  baseUrl: string;
  tickMs: number;
  /** The Redis server the replicas share their work through (controller-child.ts); set by the fleet. */
  redisUrl?: string;
  redisPrefix?: string;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
  });
}

function post(url: string, body: Buffer | string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        agent: false,
        timeout: 15_000,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", () => resolve(0));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

const CHILD = join(fileURLToPath(new URL(".", import.meta.url)), "controller-child.ts");

function isWrite(method: string, path: string): boolean {
  if (method === "GET" || method === "HEAD") return false;
  if (path.startsWith("/graphql")) return false;
  return !/\/access_tokens$/.test(path.split("?")[0] ?? "");
}

/** A controller process's peak resident memory so far, in MiB (Linux `VmHWM`); null where it cannot be read. */
function peakRssMiB(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}

/** One controller process's life: which instance, which start of it, its peak memory, and how it ended. */
export interface ControllerProcessRecord {
  instance: number;
  generation: number;
  peakRssMiB: number | null;
  killed: boolean;
}

class Instance {
  child: ChildProcess | null = null;
  /** Each process this instance ran, recorded when it ended. */
  readonly ended: ControllerProcessRecord[] = [];

  /** Its current process as it stands (before it is killed or stopped). */
  record(killed: boolean): ControllerProcessRecord {
    return {
      instance: this.index,
      generation: this.generation,
      peakRssMiB: peakRssMiB(this.child?.pid),
      killed,
    };
  }
  webhookUrl: string | null = null;
  apiUrl = "";
  private proxy: Server | null = null;
  /** Kill after this many more writes (null: not armed). */
  killAfter: number | null = null;
  restartAfterMs = 2000;
  generation = 0;
  writes = 0;
  stderr: string[] = [];
  private restartTimer: NodeJS.Timeout | null = null;
  stopped = false;

  constructor(
    readonly index: number,
    private readonly options: FleetControllerOptions,
    private readonly say: (message: string) => void,
  ) {}

  async start(): Promise<void> {
    const upstream = new URL(this.options.baseUrl);
    this.proxy = createServer((req, res) => {
      const method = req.method ?? "GET";
      const path = req.url ?? "/";
      const write = isWrite(method, path);
      const up = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method,
          path,
          headers: { ...req.headers, host: upstream.host },
          agent: false,
        },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
          upRes.on("end", () => {
            if (!write || (upRes.statusCode ?? 500) >= 400) return;
            this.writes += 1;
            if (this.killAfter === null) return;
            this.killAfter -= 1;
            if (this.killAfter <= 0) {
              this.killAfter = null;
              this.kill(`after its write ${method} ${path.split("?")[0]}`);
            }
          });
        },
      );
      up.on("error", () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      req.pipe(up);
    });
    this.apiUrl = await listen(this.proxy);
    await this.spawn();
  }

  private async spawn(): Promise<void> {
    if (this.stopped) return;
    this.generation += 1;
    const tsx = createRequire(import.meta.url).resolve("tsx");
    const child = spawn(process.execPath, ["--import", pathToFileURL(tsx).href, CHILD], {
      env: {
        ...process.env,
        AUTOPILOT_CONTROLLER_OPTIONS: JSON.stringify({ ...this.options, baseUrl: this.apiUrl, port: 0 }),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    child.stderr?.on("data", (d: Buffer) => {
      this.stderr.push(...d.toString().split("\n").filter(Boolean));
      if (this.stderr.length > 40) this.stderr.splice(0, this.stderr.length - 40);
    });
    this.webhookUrl = await new Promise<string | null>((resolve) => {
      let out = "";
      const timer = setTimeout(() => resolve(null), 60_000);
      child.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /LISTENING (\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once("exit", () => {
        clearTimeout(timer);
        resolve(null);
      });
    });
    if (!this.webhookUrl)
      this.say(`controller ${this.index} did not start: ${this.stderr.slice(-5).join(" | ")}`);
    else this.say(`controller ${this.index} (process ${child.pid}) listening`);
  }

  get live(): boolean {
    return (
      this.child !== null &&
      this.child.exitCode === null &&
      this.child.signalCode === null &&
      !!this.webhookUrl
    );
  }

  kill(why: string): void {
    const child = this.child;
    if (!child || !this.live) return;
    this.ended.push(this.record(true));
    child.kill("SIGKILL");
    this.webhookUrl = null;
    this.say(`fault: controller ${this.index} (process ${child.pid}) killed mid-reconcile ${why}`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      void this.spawn().then(() => {
        if (this.webhookUrl) this.say(`controller ${this.index} restarted on the same state`);
      });
    }, this.restartAfterMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      this.ended.push(this.record(false));
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
    }
    await new Promise<void>((r) => (this.proxy ? this.proxy.close(() => r()) : r()));
    this.proxy?.closeAllConnections?.();
  }
}

export class ControllerFleet {
  readonly instances: Instance[] = [];
  private fanout: Server | null = null;
  private redis: RedisServer | null = null;
  /** The instance the next delivery goes to first (shared work: one instance per delivery, in turn). */
  private next = 0;
  /** Where the sandbox delivers webhooks: every live instance gets each one (shared work: one of them). */
  webhookUrl = "";

  constructor(
    private readonly options: FleetControllerOptions,
    private readonly count: number,
    private readonly say: (message: string) => void,
    private readonly sharedWork = false,
  ) {}

  /** Where a delivery goes: every live instance, or (shared work) the live ones in turn, the first that answers. */
  private async deliver(body: Buffer, headers: Record<string, string>): Promise<number[]> {
    const live = this.instances.filter((i) => i.live);
    if (!this.sharedWork) return Promise.all(live.map((i) => post(i.webhookUrl!, body, headers)));
    for (let tried = 0; tried < live.length; tried++) {
      const instance = live[(this.next + tried) % live.length]!;
      const status = await post(instance.webhookUrl!, body, headers);
      if (status >= 100) {
        this.next = (this.next + tried + 1) % Math.max(1, live.length);
        return [status];
      }
    }
    return [];
  }

  async start(): Promise<void> {
    if (this.sharedWork) {
      this.redis = await startRedis();
      this.options.redisUrl = this.redis.url;
      this.options.redisPrefix = `scenario-${process.pid}-${Date.now()}`;
      this.say(`the controllers share their work through Redis at ${this.redis.url}`);
    }
    this.fanout = createServer((req, res) => {
      void readBody(req)
        .then(async (body) => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(req.headers))
            if (typeof v === "string" && (k.startsWith("x-") || k === "content-type" || k === "user-agent"))
              headers[k] = v;
          const statuses = await this.deliver(body, headers);
          // 0: the instance was gone (killed, restarting, stopping) before it answered; to GitHub that delivery
          // failed, as a refused connection is a failed delivery on its side, never an invalid status.
          res.writeHead(statuses.find((s) => s >= 100) ?? 502);
          res.end();
        })
        .catch(() => {
          // A delivery the fan-out could not pass on failed, like any other; the harness goes on.
          if (!res.headersSent) res.writeHead(502);
          res.end();
        });
    });
    this.webhookUrl = `${await listen(this.fanout)}/`;
    for (let i = 1; i <= this.count; i++) this.instances.push(new Instance(i, this.options, this.say));
    await Promise.all(this.instances.map((i) => i.start()));
  }

  /** Arms a kill: instance `index` dies right after its next `afterWrites` writes, and restarts later. */
  armKill(index: number, afterWrites: number, restartAfterSeconds: number): boolean {
    const instance = this.instances[index - 1];
    if (!instance) return false;
    instance.killAfter = afterWrites;
    instance.restartAfterMs = restartAfterSeconds * 1000;
    return true;
  }

  /** Every controller process so far, with its peak memory: the ended ones, and the live ones as of now. */
  processes(): ControllerProcessRecord[] {
    return this.instances.flatMap((i) => [...i.ended, ...(i.live ? [i.record(false)] : [])]);
  }

  liveWebhookUrls(): string[] {
    return this.instances.filter((i) => i.live).map((i) => i.webhookUrl!);
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map((i) => i.stop()));
    await new Promise<void>((r) => (this.fanout ? this.fanout.close(() => r()) : r()));
    this.fanout?.closeAllConnections?.();
    await this.redis?.stop();
  }
}

/**
 * POSTs an `issue_comment` webhook (the repository owner commenting `/autopilot pause` on the tracking issue)
 * signed with the wrong secret; returns the HTTP status (GitHub's signature check must answer 400).
 */
export async function sendBadSignatureWebhook(
  url: string,
  context: { owner: string; repo: string; installationId: number; issue: number; appId: number },
): Promise<number> {
  const payload = {
    action: "created",
    issue: { number: context.issue, title: "Autopilot dashboard", state: "open", labels: [] },
    comment: { id: 999_999, body: "/autopilot pause", user: { login: context.owner, type: "User" } },
    repository: {
      name: context.repo,
      full_name: `${context.owner}/${context.repo}`,
      owner: { login: context.owner },
    },
    sender: { login: context.owner, type: "User" },
    installation: { id: context.installationId },
  };
  const body = JSON.stringify(payload);
  const signature = `sha256=${createHmac("sha256", "not-the-webhook-secret").update(body).digest("hex")}`;
  return post(url, body, {
    "content-type": "application/json",
    "user-agent": "GitHub-Hookshot/forged",
    "x-github-event": "issue_comment",
    "x-github-delivery": `forged-${Date.now()}`,
    "x-hub-signature-256": signature,
    "x-github-hook-installation-target-id": String(context.appId),
    "x-github-hook-installation-target-type": "integration",
  });
}
