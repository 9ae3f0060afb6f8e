/**
 * `autopilot register [--org ORG]` (and `autopilot serve` started without credentials): registers the GitHub
 * App from app.yml through GitHub's manifest flow
 * (https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest).
 * A page on 127.0.0.1 posts the manifest to GitHub with a random `state`; GitHub sends the browser back with a
 * one-time `code` and the same `state` (anything else is refused); the code is exchanged for the App's id, key
 * and webhook secret, which go into `.env` (mode 0600, never over existing credentials). Where `.env` goes is
 * checked before the flow starts (src/cli/credentials-target.ts: the folder exists and is writable, git will not
 * commit the file); a write that fails after GitHub created the App hands the credentials over anyway
 * (src/cli/credentials-save.ts).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { type AppConversion, convertManifestCode } from "../github/setup/app-manifest.js";
import { type SavedCredentials, saveCredentials } from "./credentials-save.js";
import { prepareCredentialsTarget } from "./credentials-target.js";
import { CredentialsTargetError } from "./credentials-target-error.js";
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

interface Registered {
  app: AppConversion;
  credentials: SavedCredentials;
}

/** Runs the flow; resolves with the new App and where its credentials went, or null when aborted. */
async function registerApp(io: RegisterIo, options: RegisterOptions = {}): Promise<Registered | null> {
  const envPath = prepareCredentialsTarget(options.dir, process.cwd(), io.out);
  const state = randomBytes(20).toString("hex");
  const github = webUrl(io.env);
  const action = options.org
    ? `${github}/organizations/${encodeURIComponent(options.org)}/settings/apps/new?state=${state}`
    : `${github}/settings/apps/new?state=${state}`;

  let finish: (registered: Registered | null) => void = () => {};
  let fail: (error: Error) => void = () => {};
  const done = new Promise<Registered | null>((res, rej) => {
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
          const credentials = saveCredentials(io, envPath, envLines(app));
          const where =
            credentials.saved === "env"
              ? "Credentials saved to .env."
              : "Saving the credentials to .env failed: the terminal you ran register in says where they are.";
          page(
            200,
            `<h1 id="done">Registered ${escapeHtml(app.name)}</h1>
<p>${where} Now install it on your repositories: <a id="install" href="${escapeHtml(app.html_url)}/installations/new">${escapeHtml(app.html_url)}/installations/new</a></p>`,
          );
          finish({ app, credentials });
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
    const registered = await done;
    if (registered) {
      const { app, credentials } = registered;
      const file = credentials.saved === "printed" ? null : credentials.path;
      io.out(
        `Registered the GitHub App "${app.name}" (id ${app.id}); APP_ID, PRIVATE_KEY and WEBHOOK_SECRET are ${file ? `in ${file} (mode 0600)` : "printed above"}.`,
      );
      io.out(`Install it: ${app.html_url}/installations/new`);
      io.out("For the workflows, set on each repository (or organization):");
      io.out(
        `  variable AUTOPILOT_APP_ID = ${app.id}          gh variable set AUTOPILOT_APP_ID --body ${app.id}`,
      );
      io.out("  secret   AUTOPILOT_APP_PRIVATE_KEY = PRIVATE_KEY from .env:");
      io.out(`    ${keySecretCommand(file ?? envPath)}`);
    }
    return registered;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    await new Promise<void>((res) => {
      server.close(() => res());
      server.closeAllConnections();
    });
  }
}

/**
 * `autopilot register`: exit code 0 when registered and saved to `.env`; 2 when refused before starting (where
 * `.env` goes: missing, unwritable, holding credentials, or tracked by git); 1 when the registration failed, or
 * the App was created but its credentials were handed over elsewhere (printed or in a temp file).
 */
export async function runRegister(io: RegisterIo, options: RegisterOptions): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  try {
    const registered = await registerApp(io, { ...options, signal: options.signal ?? controller.signal });
    if (!registered) return 130;
    return registered.credentials.saved === "env" ? 0 : 1;
  } catch (error) {
    io.err((error as Error).message);
    return error instanceof CredentialsTargetError ? 2 : 1;
  } finally {
    process.off("SIGINT", stop);
  }
}
