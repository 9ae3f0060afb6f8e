/**
 * What the hosted app costs to install and run, without the sandbox:
 *
 *   npx tsx bench/serve-footprint.ts            # all four figures (about a minute; also part of npm run bench)
 *
 * - installed size of the production dependencies: `npm ci --omit=dev --ignore-scripts` into a temporary copy of
 *   package.json and package-lock.json, then `du -sh node_modules` (the README's command for the figure);
 * - the hosted app as the Docker image runs it (`node dist/serve/index.js`, the bundle `npm run bundle` builds)
 *   and as `autopilot serve` runs it (`node bin/autopilot.js serve`: with the App's credentials set, the same
 *   bundle behind the CLI's launcher), with dummy App credentials and nothing reached: from spawn to its "listening" line, over bare Node
 *   starting an HTTP server the same way (median of 5 each);
 * - their resident memory (VmRSS from /proc) 5 s after they listen, idle;
 * - the worker bundle's size (dist/worker/index.js, as built by `npm run bundle`).
 * Asserts nothing; prints a markdown table.
 */
import { execFileSync, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { isMain, machineLine, printTable } from "./lib.js";

const root = join(import.meta.dirname, "..");
const RUNS = 5;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
  return line ? Number(line[1]) / 1024 : Number.NaN;
}

/** Spawns `node args`, resolves when a line contains `marker`: milliseconds from spawn, and the RSS then + 5 s. */
async function startUntil(
  args: string[],
  env: NodeJS.ProcessEnv,
  marker: string,
  idleMs = 0,
): Promise<{ ms: number; rss: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  try {
    const ms = await new Promise<number>((resolve, reject) => {
      let output = "";
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes(marker)) resolve(performance.now() - started);
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
      child.on("exit", (code) => reject(new Error(`exited with ${code} before "${marker}":\n${output}`)));
    });
    if (idleMs > 0) await new Promise((r) => setTimeout(r, idleMs));
    return { ms, rss: idleMs > 0 ? rssMiB(child.pid!) : Number.NaN };
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => (child.exitCode === null ? child.once("exit", r) : r(null)));
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function productionInstallSize(): { size: string; packages: number } {
  const dir = mkdtempSync(join(tmpdir(), "autopilot-prod-install-"));
  try {
    for (const file of ["package.json", "package-lock.json"]) copyFileSync(join(root, file), join(dir, file));
    execFileSync(
      "npm",
      [
        "ci",
        "--omit=dev",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--loglevel=error",
      ],
      {
        cwd: dir,
        stdio: "ignore",
      },
    );
    const size = execFileSync("du", ["-sh", "node_modules"], { cwd: dir, encoding: "utf8" }).split("\t")[0]!;
    const packages = execFileSync("npm", ["ls", "--all", "--parseable", "--omit=dev"], {
      cwd: dir,
      encoding: "utf8",
    })
      .trim()
      .split("\n").length;
    return { size, packages: packages - 1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runServeFootprintBench(): Promise<void> {
  const install = productionInstallSize();
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const serveEnv = {
    ...process.env,
    APP_ID: "1",
    PRIVATE_KEY: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    WEBHOOK_SECRET: "bench",
    HOST: "127.0.0.1",
    AUTOPILOT_TICK_SECONDS: "0",
    GITHUB_API_URL: "http://127.0.0.1:9",
  };
  const bare: number[] = [];
  const ways = [
    {
      name: "node dist/serve/index.js (the image)",
      args: ["dist/serve/index.js"],
      ms: [] as number[],
      rss: 0,
    },
    {
      name: "autopilot serve (bin/autopilot.js → the bundle)",
      args: ["bin/autopilot.js", "serve"],
      ms: [] as number[],
      rss: 0,
    },
  ];
  for (let i = 0; i < RUNS; i++) {
    const port = await freePort();
    bare.push(
      (
        await startUntil(
          [
            "-e",
            `require("node:http").createServer().listen(${port}, "127.0.0.1", () => console.log("listening"))`,
          ],
          process.env,
          "listening",
        )
      ).ms,
    );
    for (const way of ways) {
      const run = await startUntil(
        way.args,
        { ...serveEnv, PORT: String(await freePort()) },
        "Autopilot controller listening",
        i === 0 ? 5000 : 0,
      );
      way.ms.push(run.ms);
      if (i === 0) way.rss = run.rss;
    }
  }
  const bundle = join(root, "dist", "worker", "index.js");
  const bundleBytes = statSync(bundle).size;
  const gzipBytes = gzipSync(readFileSync(bundle)).length;
  const base = median(bare);
  printTable(
    "The hosted app's footprint (bench/serve-footprint.ts)",
    [
      ["figure", "value", "goal"],
      [
        "production dependencies installed (npm ci --omit=dev --ignore-scripts, du -sh)",
        `${install.size} (${install.packages} packages)`,
        "≤ 100 MB",
      ],
      ...ways.flatMap((way) => [
        [
          `${way.name}: spawn to listening, over bare Node (median of ${RUNS})`,
          `${Math.round(median(way.ms) - base)} ms (${Math.round(median(way.ms))} vs ${Math.round(base)} ms)`,
          "≤ 400 ms",
        ],
        [`${way.name}: resident memory, idle 5 s after listening`, `${way.rss.toFixed(0)} MiB`, "≤ 80 MB"],
      ]),
      [
        "worker bundle dist/worker/index.js",
        `${(bundleBytes / 1024 / 1024).toFixed(2)} MiB (${(gzipBytes / 1024).toFixed(0)} KiB gzipped)`,
        "",
      ],
    ],
    [machineLine()],
  );
}

if (isMain(import.meta.url)) await runServeFootprintBench();
