import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { request } from "node:http";
import { dirname, join } from "node:path";
import { parseEnv } from "node:util";
import { Octokit } from "@octokit/rest";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { runRegister } from "../../src/cli/register.js";
import { registerForServe } from "../../src/cli/serve-setup.js";
import { appJwt } from "../../src/github/setup/setup-facts.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";
import { launchChromium } from "../helpers/chromium.js";
import { systemGit } from "../helpers/system-git.js";

let sandbox: Sandbox;
let browser: Browser;
let dir: string;
let out: string[];
let err: string[];

function io(extra: NodeJS.ProcessEnv = {}) {
  return {
    out: (l: string) => out.push(l),
    err: (l: string) => err.push(l),
    env: {
      PORT: "0",
      GITHUB_SERVER_URL: sandbox.url,
      GITHUB_API_URL: sandbox.url,
      ...extra,
    } as NodeJS.ProcessEnv,
  };
}

/** The local page's URL, once the command prints it. */
async function localPage(): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const line = out.find((l) => l.startsWith("Open http://127.0.0.1:"));
    if (line) return /Open (\S+)/.exec(line)![1]!;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`register printed no URL: ${out.join("\n")} ${err.join("\n")}`);
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync(systemGit(), ["-C", cwd, ...args], { encoding: "utf8" });
}

/** A person in the browser: the local page, GitHub's page, the button, back to the local page. */
async function clickThrough(url: string): Promise<string> {
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.click("#register");
    await page.waitForSelector("#create");
    const githubText = await page.textContent("body");
    await page.click("#create");
    await page.waitForSelector("#done");
    return `${githubText}\n${await page.textContent("body")}`;
  } finally {
    await page.close();
  }
}

beforeAll(async () => {
  sandbox = await startSandbox();
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await sandbox?.stop();
}, 120_000);
beforeEach(() => {
  out = [];
  err = [];
  dir = mkdtempSync(join(tmpdir(), "register-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("autopilot register (GitHub's App-manifest flow, on the sandbox, in Chromium)", {
  timeout: 240_000,
}, () => {
  it("registers the App for an organization and writes working credentials to .env (0600)", async () => {
    const done = main(["register", "--org", "acme", "--dir", dir], io());
    const text = await clickThrough(await localPage());
    expect(await done).toBe(0);
    expect(text).toContain("Create GitHub App for acme");
    expect(text).toContain("Registered Autopilot");

    const envPath = join(dir, ".env");
    expect(statSync(envPath).mode & 0o777).toBe(0o600);
    const env = parseEnv(readFileSync(envPath, "utf8"));
    expect(env.APP_ID).toBe(String(sandbox.app.id));
    expect(env.PRIVATE_KEY?.trim()).toBe(sandbox.app.privateKey.trim());
    expect(env.WEBHOOK_SECRET).toBe(sandbox.app.webhookSecret);
    // The saved key authenticates as the App.
    const app = new Octokit({
      auth: appJwt({ appId: env.APP_ID!, privateKey: env.PRIVATE_KEY! }, sandbox.store.clock()),
      baseUrl: sandbox.url,
    });
    expect((await app.rest.apps.getAuthenticated()).data?.id).toBe(sandbox.app.id);
    const printed = out.join("\n");
    expect(printed).toContain("variable AUTOPILOT_APP_ID");
    expect(printed).toContain("gh secret set AUTOPILOT_APP_PRIVATE_KEY");
    sandbox.assertNoValidationFailures();
  });

  it("`autopilot serve` without credentials registers first, then has them", async () => {
    const env = io().env;
    const done = registerForServe({ out: (l) => out.push(l), err: (l) => err.push(l), env }, dir);
    const text = await clickThrough(await localPage());
    expect(await done).toBe(0);
    expect(text).toContain(`Create GitHub App for ${sandbox.app.owner}`);
    expect(env.APP_ID).toBe(String(sandbox.app.id));
    expect(env.PRIVATE_KEY).toContain("-----BEGIN RSA PRIVATE KEY-----");
    // Started again, it reads .env and asks nothing.
    const again: NodeJS.ProcessEnv = { PORT: "0" };
    expect(await registerForServe({ out: () => {}, err: () => {}, env: again }, dir)).toBe(0);
    expect(again.APP_ID).toBe(String(sandbox.app.id));
  });

  it("refuses a callback whose state it did not send, and saves nothing (attack: a forged redirect)", async () => {
    const done = main(["register", "--dir", dir], io());
    const local = await localPage();
    // An attacker registers an App of their own through GitHub and sends the victim's browser the redirect.
    const manifest = JSON.stringify({
      name: "Evil",
      url: "https://evil.example",
      redirect_url: `${local}callback`,
    });
    const forged = await fetch(`${sandbox.url}/settings/apps/new/confirm`, {
      method: "POST",
      body: new URLSearchParams({ manifest, state: "attacker-chosen" }),
      redirect: "manual",
    });
    expect(forged.status).toBe(302);
    const location = forged.headers.get("location")!;
    const answer = await fetch(location);
    expect(answer.status).toBe(400);
    expect(await answer.text()).toContain("state does not match");
    expect(existsSync(join(dir, ".env"))).toBe(false);
    // The forged code was never exchanged: it still converts.
    const code = new URL(location).searchParams.get("code")!;
    const conversion = await fetch(`${sandbox.url}/app-manifests/${code}/conversions`, { method: "POST" });
    expect(conversion.status).toBe(201);
    // The real flow still completes afterwards.
    await clickThrough(local);
    expect(await done).toBe(0);
    expect(existsSync(join(dir, ".env"))).toBe(true);
  });

  it("does not show its page (and the state in it) to another site's name (attack: DNS rebinding)", async () => {
    const done = main(["register", "--dir", dir], io());
    const local = new URL(await localPage());
    const get = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port: local.port, path: "/", headers: { host } }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => {
            body += c.toString();
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("error", reject);
        req.end();
      });
    const rebound = await get(`evil.example:${local.port}`);
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain("state=");
    // The person's own browser, at the printed address, still gets the page.
    const own = await get(local.host);
    expect(own.status).toBe(200);
    expect(own.body).toContain("state=");
    await clickThrough(local.href);
    expect(await done).toBe(0);
  });

  it("never overwrites App credentials already in .env", async () => {
    const envPath = join(dir, ".env");
    writeFileSync(envPath, "APP_ID=42\nOTHER=1\n");
    expect(await main(["register", "--dir", dir], io())).toBe(2);
    expect(readFileSync(envPath, "utf8")).toBe("APP_ID=42\nOTHER=1\n");
    expect(err.join("\n")).toContain("already holds APP_ID");
  });

  it("adds to a .env without App credentials, keeping what is there", async () => {
    const envPath = join(dir, ".env");
    writeFileSync(envPath, "OTHER=1\n");
    const done = main(["register", "--dir", dir], io());
    await clickThrough(await localPage());
    expect(await done).toBe(0);
    const env = parseEnv(readFileSync(envPath, "utf8"));
    expect(env.OTHER).toBe("1");
    expect(env.APP_ID).toBe(String(sandbox.app.id));
    expect(statSync(envPath).mode & 0o777).toBe(0o600);
  });

  it("refuses a --dir that does not exist before the flow starts (no page, nothing for GitHub to create)", async () => {
    const missing = join(dir, "not-there");
    const stop = new AbortController();
    const done = runRegister(io(), { dir: missing, signal: stop.signal });
    // Were the flow to start, its page would be printed: stop it then, so the test ends either way.
    const flowStarted = localPage().then(
      () => "the flow started",
      () => null,
    );
    const first = await Promise.race([done, flowStarted]);
    stop.abort();
    expect(first).toBe(2);
    expect(out.join("\n")).not.toContain("Open http");
    expect(err.join("\n")).toContain(
      `--dir ${missing} does not exist: create it first (mkdir -p ${missing})`,
    );
    expect(err.join("\n")).toContain("Nothing was registered.");
    expect(existsSync(missing)).toBe(false);
  });

  it("in a git work tree, ignores the exact .env it writes (git status does not show it), and writes it 0600", async () => {
    git(dir, "init", "-q");
    writeFileSync(join(dir, ".gitignore"), "node_modules");
    const target = join(dir, "deploy");
    mkdirSync(target);
    const done = main(["register", "--dir", target], io());
    await clickThrough(await localPage());
    expect(await done).toBe(0);
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe("node_modules\n/deploy/.env\n");
    expect(out.join("\n")).toContain(`Added /deploy/.env to ${join(dir, ".gitignore")}`);
    const status = git(dir, "status", "--porcelain", "--untracked-files=all");
    expect(status).not.toContain(".env");
    expect(status).toContain("?? .gitignore");
    expect(statSync(join(target, ".env")).mode & 0o777).toBe(0o600);
    expect(parseEnv(readFileSync(join(target, ".env"), "utf8")).APP_ID).toBe(String(sandbox.app.id));
  });

  it("refuses a .env git tracks before the flow starts: the key would be committed", async () => {
    git(dir, "init", "-q");
    writeFileSync(join(dir, ".env"), "OTHER=1\n");
    git(dir, "add", ".env");
    const stop = new AbortController();
    const done = runRegister(io(), { dir, signal: stop.signal });
    const first = await Promise.race([
      done,
      localPage().then(
        () => "the flow started",
        () => null,
      ),
    ]);
    stop.abort();
    expect(first).toBe(2);
    expect(err.join("\n")).toContain(`${join(dir, ".env")} is tracked by git`);
    expect(readFileSync(join(dir, ".env"), "utf8")).toBe("OTHER=1\n");
  });

  it("hands the credentials over when the write fails after GitHub created the App (a 0600 file in the temp folder)", async () => {
    const target = join(dir, "vanishing");
    mkdirSync(target);
    const done = main(["register", "--dir", target], io());
    const local = await localPage();
    // The folder goes away while the person is on GitHub's page: the App is created, the .env cannot be written.
    rmSync(target, { recursive: true });
    const text = await clickThrough(local);
    expect(await done).toBe(1);
    expect(text).toContain("the terminal you ran register in says where they are");
    const printed = out.join("\n");
    const handedOver = /The App's credentials are in (\S+) \(mode 0600/.exec(printed)?.[1];
    expect(handedOver, printed).toBeDefined();
    try {
      expect(statSync(handedOver!).mode & 0o777).toBe(0o600);
      expect(statSync(dirname(handedOver!)).mode & 0o777).toBe(0o700);
      const saved = parseEnv(readFileSync(handedOver!, "utf8"));
      expect(saved.APP_ID).toBe(String(sandbox.app.id));
      expect(saved.PRIVATE_KEY?.trim()).toBe(sandbox.app.privateKey.trim());
      expect(saved.WEBHOOK_SECRET).toBe(sandbox.app.webhookSecret);
      expect(err.join("\n")).toContain(`could not be written to ${join(target, ".env")}`);
      expect(printed).toContain(`mv ${handedOver} ${join(target, ".env")}`);
    } finally {
      rmSync(dirname(handedOver!), { recursive: true, force: true });
    }
  });

  it("refuses a manifest without its required homepage url (the sandbox, as GitHub)", async () => {
    const manifest = JSON.stringify({ name: "No home", redirect_url: "http://127.0.0.1:9/cb" });
    const refused = await fetch(`${sandbox.url}/settings/apps/new/confirm`, {
      method: "POST",
      body: new URLSearchParams({ manifest, state: "s" }),
      redirect: "manual",
    });
    expect(refused.status).toBe(422);
    expect(refused.headers.get("location")).toBeNull();
  });

  it("the conversion code is single-use (the sandbox, as GitHub)", async () => {
    const manifest = JSON.stringify({
      name: "Once",
      url: "https://x.example",
      redirect_url: "http://127.0.0.1:9/cb",
    });
    const created = await fetch(`${sandbox.url}/settings/apps/new/confirm`, {
      method: "POST",
      body: new URLSearchParams({ manifest, state: "s" }),
      redirect: "manual",
    });
    const code = new URL(created.headers.get("location")!).searchParams.get("code")!;
    expect((await fetch(`${sandbox.url}/app-manifests/${code}/conversions`, { method: "POST" })).status).toBe(
      201,
    );
    expect((await fetch(`${sandbox.url}/app-manifests/${code}/conversions`, { method: "POST" })).status).toBe(
      404,
    );
  });
});
