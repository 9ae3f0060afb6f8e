/**
 * `autopilot start --port P --keep`, end to end: the bundled demo runs, then its pages stay up; in Chromium
 * the repository lists the demo's issues and the tracking issue shows the dashboard as HTML with its graph
 * drawn. Ctrl-C then ends the command and leaves nothing listening or running.
 *
 * With UPDATE_SCREENSHOTS=1 the dashboard page is saved to docs/images/dashboard.png (the README's picture; with
 * Debian's fonts-noto-color-emoji installed, the heading's emoji is drawn rather than a box).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../src/cli/package-root.js";
import { DEFAULT_SCENARIO } from "../../sandbox/scenario/run-scenario.js";
import { loadScenario } from "../../sandbox/scenario/scenario-file.js";
import { launchChromium } from "../helpers/chromium.js";

const DEMO_LIMIT_MS = 15 * 60_000;

let child: ChildProcess | null = null;
let browser: Browser | null = null;

afterAll(async () => {
  await browser?.close();
  // Only when the test failed half-way: the command's whole process group goes.
  if (child?.pid && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("autopilot start --port P --keep", () => {
  it(
    "runs the demo, keeps its pages up with the dashboard drawn, and stops cleanly on Ctrl-C",
    async () => {
      const port = await freePort();
      const env = { ...process.env };
      for (const key of ["APP_ID", "PRIVATE_KEY", "PRIVATE_KEY_PATH"]) delete env[key];
      const command = spawn(
        process.execPath,
        [join(PACKAGE_ROOT, "bin", "autopilot.js"), "start", "--port", String(port), "--keep"],
        { cwd: PACKAGE_ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
      );
      child = command;
      let output = "";
      command.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      command.stderr?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        command.once("exit", (code, signal) => resolve({ code, signal })),
      );
      const kept = new Promise<void>((resolve, reject) => {
        const check = setInterval(() => {
          if (output.includes("press Ctrl-C to stop")) {
            clearInterval(check);
            resolve();
          }
        }, 200);
        void exited.then(() => {
          clearInterval(check);
          reject(new Error(`autopilot start exited before keeping its pages up:\n${output}`));
        });
      });
      await kept;
      const url = `http://127.0.0.1:${port}/`;
      // The URL comes first, before the run's progress.
      expect(output.indexOf(`Watch it as GitHub would show it: ${url}`)).toBeGreaterThanOrEqual(0);
      expect(output.indexOf(url)).toBeLessThan(output.indexOf("issues opened"));
      const apiPorts = [...output.matchAll(/http:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));

      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const offsite: string[] = [];
      page.on("request", (request) => {
        if (!request.url().startsWith(url)) offsite.push(request.url());
      });

      const demo = loadScenario(DEFAULT_SCENARIO);
      await page.goto(url);
      const repoLink = page.locator(`a[href="/${demo.repo.owner}/${demo.repo.name}/issues"]`);
      expect(await repoLink.count()).toBe(1);
      await repoLink.click();
      for (const issue of demo.issues) {
        expect(await page.locator(".list .title", { hasText: issue.title }).count()).toBeGreaterThanOrEqual(
          1,
        );
      }
      await page.locator(".list .title", { hasText: "Autopilot dashboard" }).first().click();
      await page.waitForSelector('body[data-diagrams="drawn"]', { timeout: 60_000 });
      const body = page.locator(".opening .markdown-body");
      expect(await body.locator("h2").first().textContent()).toMatch(/Autopilot/);
      expect(await body.locator("table").count()).toBeGreaterThanOrEqual(1);
      expect(await body.textContent()).not.toContain("autopilot:state");
      await body.locator("summary", { hasText: "Dependency graph" }).click();
      const svg = body.locator(".mermaid svg");
      await svg.waitFor({ state: "visible" });
      // One drawn node per task node in the graph's source, as served before the browser drew it.
      const served = await (await fetch(page.url())).text();
      const source = /<code class="language-mermaid">([\s\S]*?)<\/code>/.exec(served)?.[1] ?? "";
      const declared = source.match(/^\s+i\d+\[/gm)?.length ?? 0;
      expect(declared).toBeGreaterThan(0);
      expect(await svg.locator(".node").count()).toBe(declared);
      expect(offsite).toEqual([]);
      if (process.env.UPDATE_SCREENSHOTS === "1") {
        mkdirSync(join(PACKAGE_ROOT, "docs", "images"), { recursive: true });
        await page.screenshot({
          path: join(PACKAGE_ROOT, "docs", "images", "dashboard.png"),
          fullPage: true,
        });
      }
      await browser.close();
      browser = null;

      process.kill(command.pid!, "SIGINT");
      const { code, signal } = await exited;
      // The demo's outcome (0 passed, 1 did not) is the demo scenario's own tests' business; here the
      // command must end by itself on Ctrl-C.
      expect(signal).toBeNull();
      expect([0, 1]).toContain(code);
      expect(output).toContain("Outcome:");
      expect(await listening(port)).toBe(false);
      for (const apiPort of apiPorts) expect(await listening(apiPort)).toBe(false);
      // Processes the command stopped may take a moment to be reaped after it exits.
      await expect.poll(() => groupAlive(command.pid!), { timeout: 30_000, interval: 250 }).toBe(false);
    },
    DEMO_LIMIT_MS,
  );
});
