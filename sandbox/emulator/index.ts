/**
 * The offline GitHub sandbox: one HTTP server on 127.0.0.1 serving REST (validated against GitHub's OpenAPI
 * description), GraphQL (validated against GitHub's schema), signed webhook deliveries, and whatever other
 * parts mount on it with {@link Sandbox.registerHandler} (the git remote at `/git/`), and read-only web
 * pages of the same store on a second port ({@link Sandbox.web}).
 *
 * ```ts
 * const sandbox = await startSandbox();
 * sandbox.store.createRepo({ owner: "acme", name: "widgets" });
 * const octokit = new Octokit({ auth: sandbox.installationToken(), baseUrl: sandbox.url });
 * ...
 * sandbox.assertNoValidationFailures();
 * await sandbox.stop();
 * ```
 */
import { manifestPages } from "./server/app-setup.js";
import { createSandboxApp } from "./server/auth.js";
import { type Sandbox, type SandboxOptions, SandboxServer } from "./server/api-server.js";
import { assertNoValidationFailures as assertNone } from "./server/accounting.js";
import { SandboxStore } from "./store.js";
import { startWebView } from "./web/web-view.js";
export { repoSettings } from "./server/app-setup.js";
export { FaultsSchema } from "./server/faults.js";
export * from "./store.js";
export type { RunDetails } from "./web/web-view.js";
export { WebViewPortError } from "./web/web-view.js";
export type { Sandbox } from "./server/api-server.js";

/** Throws listing the sandbox's validation failures (REST and GraphQL requests GitHub would reject). */
export function assertNoValidationFailures(sandbox: Pick<Sandbox, "validationFailures">): void {
  assertNone(sandbox.validationFailures);
}

/** Starts a sandbox on 127.0.0.1 (loading GitHub's OpenAPI description and GraphQL schema on first use). */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const store = options.existingStore ?? new SandboxStore(options.store);
  const app = createSandboxApp(store);
  const server = new SandboxServer({ store, app, options });
  await server.listen(options.port ?? 0);
  let web: Awaited<ReturnType<typeof startWebView>>;
  try {
    web = await startWebView({ store, port: options.webPort ?? 0 });
  } catch (error) {
    await server.stop();
    throw error;
  }
  const api = server.toSandbox();
  // GitHub's web pages of the App-manifest registration flow, at GitHub's own paths.
  const pages = manifestPages(store, app);
  api.registerHandler("/settings/apps/new", pages);
  api.registerHandler("/organizations/", pages);
  let stopping: Promise<void> | null = null;
  return {
    ...api,
    web,
    stop: () => {
      stopping ??= Promise.all([web.stop(), api.stop()]).then(() => undefined);
      return stopping;
    },
  };
}
