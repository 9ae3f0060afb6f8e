/**
 * `autopilot register [--org ORG]` (and `autopilot serve` started without credentials): registers the GitHub
 * App from app.yml through GitHub's manifest flow
 * (https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest).
 * A page on 127.0.0.1 posts the manifest to GitHub with a random `state`; GitHub sends the browser back with a
 * one-time `code` and the same `state` (anything else is refused); the code is exchanged for the App's id, key
 * and webhook secret, which go into `.env` (mode 0600, never over existing credentials).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { appendFileSync, chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { type AppConversion, convertManifestCode } from "../github/setup/app-manifest.js";
import { PACKAGE_ROOT } from "./package-root.js";
import { apiUrl, keySecretCommand, type SetupIo, webUrl } from "./setup-context.js";

type RegisterIo = SetupIo;

interface RegisterOptions {
  org?: string;
  /** Where `.env` goes (default: the current directory). */
  dir?: string;
  /** The public URL of `autopilot serve`'s webhooks; without it deliveries start switched off. */
  webhookUrl?: string;
  /** Aborts the wait (tests, Ctrl-C). */
  signal?: AbortSignal;
}

const CREDENTIAL_KEYS = ["APP_ID", "PRIVATE_KEY", "WEBHOOK_SECRET"] as const;

/** The manifest GitHub receives: app.yml plus where to send the person back to, and the webhook URL. */
function buildManifest(redirectUrl: string, webhookUrl: string | undefined): Record<string, unknown> {
  const manifest = parseYaml(readFileSync(join(PACKAGE_ROOT, "app.yml"), "utf8")) as Record<string, unknown>;
  const hook = { ...((manifest.hook_attributes as Record<string, unknown> | undefined) ?? {}) };
  if (webhookUrl) {
    hook.url = webhookUrl;
    hook.active = true;
  } else {
    // In `actions` mode the controller runs on workflow events and needs no deliveries.
    hook.active = false;
  }
  return { ...manifest, hook_attributes: hook, redirect_url: redirectUrl };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function sameState(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function envLines(app: AppConversion): string {
  const key = app.pem.trim().replace(/\r?\n/g, "\\n");
  return [
    `# GitHub App "${app.name}" (${app.html_url}), registered by autopilot register`,
    `APP_ID=${app.id}`,
    `PRIVATE_KEY="${key}"`,
    `WEBHOOK_SECRET=${app.webhook_secret ?? ""}`,
    "",
  ].join("\n");
}

/** Refuses before anything starts when `.env` already holds App credentials. */
function envFileProblem(path: string): string | null {
  if (!existsSync(path)) return null;
  const text = readFileSync(path, "utf8");
  const found = CREDENTIAL_KEYS.filter((k) => new RegExp(`^\\s*(export\\s+)?${k}\\s*=`, "m").test(text));
  return found.length
    ? `${path} already holds ${found.join(", ")}: move it away (or remove those lines) to register another App; nothing was changed.`
    : null;
}

/** Runs the flow; resolves with the new App (after `.env` is written), or null when aborted. */
async function registerApp(io: RegisterIo, options: RegisterOptions = {}): Promise<AppConversion | null> {
  const envPath = join(resolve(options.dir ?? process.cwd()), ".env");
  const problem = envFileProblem(envPath);
  if (problem) throw new Error(problem);
  const state = randomBytes(20).toString("hex");
  const github = webUrl(io.env);
  const action = options.org
    ? `${github}/organizations/${encodeURIComponent(options.org)}/settings/apps/new?state=${state}`
    : `${github}/settings/apps/new?state=${state}`;

  let finish: (app: AppConversion | null) => void = () => {};
  let fail: (error: Error) => void = () => {};
  const done = new Promise<AppConversion | null>((res, rej) => {
    finish = res;
    fail = rej;
  });
  let redirectUrl = "";
  let exchanging = false;
  let port = 0;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const page = (status: number, body: string) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end(
        `<!doctype html><html><head><meta charset="utf-8"><title>Autopilot: register the GitHub App</title><link rel="icon" href="data:,"></head><body>${body}</body></html>`,
      );
    };
    // A page of another site that rebinds its name to 127.0.0.1 must not read the `state` off this page
    // (with it, a redirect carrying the attacker's own code would pass the check below).
    const host = req.headers.host ?? "";
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      page(421, "<h1>This page answers only 127.0.0.1</h1>");
      return;
    }
    if (req.method === "GET" && url.pathname === "/") {
      const manifest = JSON.stringify(buildManifest(redirectUrl, options.webhookUrl));
      page(
        200,
        `<h1>Register Autopilot's GitHub App${options.org ? ` for ${escapeHtml(options.org)}` : ""}</h1>
<p>GitHub will show the App's permissions and ask you to name it.</p>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="manifest" value="${escapeHtml(manifest)}">
<button type="submit" id="register">Register on GitHub</button>
</form>`,
      );
      return;
    }
    if (req.method === "GET" && url.pathname === "/callback") {
      const code = url.searchParams.get("code") ?? "";
      const returned = url.searchParams.get("state") ?? "";
      // A redirect we did not start (another page, a replayed link) must not write credentials.
      if (!code || !sameState(returned, state)) {
        page(
          400,
          "<h1>This link was not started here</h1><p>The state does not match; nothing was saved.</p>",
        );
        io.err("Refused a callback whose state does not match the one this page sent.");
        return;
      }
      if (exchanging) {
        page(409, "<h1>Already registered</h1>");
        return;
      }
      exchanging = true;
      convertManifestCode({ code, baseUrl: apiUrl(io.env) })
        .then((app) => {
          const again = envFileProblem(envPath);
          if (again) throw new Error(again);
          if (existsSync(envPath)) appendFileSync(envPath, `\n${envLines(app)}`);
          else writeFileSync(envPath, envLines(app), { mode: 0o600 });
          chmodSync(envPath, 0o600);
          page(
            200,
            `<h1 id="done">Registered ${escapeHtml(app.name)}</h1>
<p>Credentials saved to .env. Now install it on your repositories: <a id="install" href="${escapeHtml(app.html_url)}/installations/new">${escapeHtml(app.html_url)}/installations/new</a></p>`,
          );
          finish(app);
        })
        .catch((error: Error) => {
          page(500, `<h1>Registration failed</h1><p>${escapeHtml(error.message)}</p>`);
          fail(error);
        });
      return;
    }
    page(404, "<h1>Not Found</h1>");
  });
  await new Promise<void>((res, rej) => {
    server.once("error", rej);
    server.listen(Number(io.env.PORT ?? 3000), "127.0.0.1", () => res());
  });
  port = (server.address() as AddressInfo).port;
  const local = `http://127.0.0.1:${port}`;
  redirectUrl = `${local}/callback`;
  io.out(`Open ${local}/ in your browser to register the GitHub App (Ctrl-C stops).`);
  const onAbort = () => finish(null);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const app = await done;
    if (app) {
      io.out(
        `Registered the GitHub App "${app.name}" (id ${app.id}); APP_ID, PRIVATE_KEY and WEBHOOK_SECRET are in ${envPath} (mode 0600).`,
      );
      io.out(`Install it: ${app.html_url}/installations/new`);
      io.out("For the workflows, set on each repository (or organization):");
      io.out(
        `  variable AUTOPILOT_APP_ID = ${app.id}          gh variable set AUTOPILOT_APP_ID --body ${app.id}`,
      );
      io.out("  secret   AUTOPILOT_APP_PRIVATE_KEY = PRIVATE_KEY from .env:");
      io.out(`    ${keySecretCommand(envPath)}`);
    }
    return app;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    await new Promise<void>((res) => {
      server.close(() => res());
      server.closeAllConnections();
    });
  }
}

/** `autopilot register`: exit code 0 when registered, 2 when `.env` already holds credentials. */
export async function runRegister(io: RegisterIo, options: RegisterOptions): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  try {
    const app = await registerApp(io, { ...options, signal: options.signal ?? controller.signal });
    return app ? 0 : 130;
  } catch (error) {
    io.err((error as Error).message);
    return /already holds/.test((error as Error).message) ? 2 : 1;
  } finally {
    process.off("SIGINT", stop);
  }
}
