/**
 * The product's own commands load none of the sandbox: `autopilot --help` and `autopilot serve` (the hosted
 * app, which a production install runs without sandbox/ or the emulator's packages) resolve no file under
 * sandbox/ and no development dependency. Each runs as a real process with a resolve hook that records every
 * module it loads (test/fixtures/record-modules.mjs).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const recorder = join(root, "test", "fixtures", "record-modules.mjs");
const dir = mkdtempSync(join(tmpdir(), "product-loads-"));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, { dev?: boolean }>;
};

/** Whether a module is a file of a package only development installs (the lock file marks them `dev`). */
function developmentOnly(url: string): boolean {
  const key = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(url.slice(`file://${root}/`.length))?.[1];
  return key !== undefined && lock.packages[key]?.dev === true;
}

/** What of the recorded modules belongs to the sandbox or to a package a production install lacks. */
function equipment(file: string): string[] {
  const urls = readFileSync(file, "utf8").split("\n").filter(Boolean);
  // The recorder saw the program load (the launcher and its modules at least), so an empty list means something.
  expect(urls.some((url) => url.endsWith("/bin/autopilot.js"))).toBe(true);
  return [...new Set(urls)].filter(
    (url) => url.startsWith(`file://${root}/sandbox/`) || (url.startsWith("file:") && developmentOnly(url)),
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("the product's commands without the sandbox", () => {
  it("autopilot --help loads no sandbox file and no development dependency", () => {
    const file = join(dir, "help.txt");
    const result = spawnSync(process.execPath, ["--import", recorder, "bin/autopilot.js", "--help"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, RECORD_MODULES: file },
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^\s+serve\b/m);
    expect(equipment(file)).toEqual([]);
    // The CLI's bundle, compiled JavaScript: no TypeScript source is loaded (nothing compiles at run time).
    const loaded = readFileSync(file, "utf8").split("\n");
    expect(loaded).toContain(`file://${root}/dist/cli/index.js`);
    expect(loaded.filter((url) => /\.[mc]?ts$/.test(url))).toEqual([]);
  });

  it("autopilot serve listens having loaded no sandbox file and no development dependency", async () => {
    const file = join(dir, "serve.txt");
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const port = await freePort();
    const child = spawn(process.execPath, ["--import", recorder, "bin/autopilot.js", "serve"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        RECORD_MODULES: file,
        APP_ID: "1",
        PRIVATE_KEY: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
        WEBHOOK_SECRET: "secret",
        PORT: String(port),
        HOST: "127.0.0.1",
        AUTOPILOT_TICK_SECONDS: "0",
        // Nothing answers here: the controller makes no request before a webhook arrives.
        GITHUB_API_URL: "http://127.0.0.1:9",
      },
    });
    children.push(child);
    let output = "";
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Autopilot controller listening")) resolve();
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", onData);
      void exited.then((code) => reject(new Error(`serve exited with ${code} before listening:\n${output}`)));
    });
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.ok).toBe(true);
    child.kill("SIGTERM");
    await exited;
    expect(equipment(file)).toEqual([]);
    // With the App's credentials, the launcher runs the hosted app's bundle: no TypeScript compiled at start.
    const loaded = readFileSync(file, "utf8");
    expect(loaded).toContain("/dist/serve/index.js");
    expect(loaded).not.toContain("/src/cli/main.ts");
  });
});
