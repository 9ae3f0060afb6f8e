/**
 * `WEBHOOK_PROXY_URL`: Probot's way to receive webhooks on a machine GitHub cannot reach
 * (https://probot.github.io/docs/configuration/): a smee.io channel (or any server speaking its protocol), whose
 * deliveries smee-client, the relay Probot's maintainers keep, reads as server-sent events and posts to the
 * webhook URL `serve` listens on. The deliveries keep GitHub's signature headers, so the server verifies each one
 * as it does a direct delivery: the relay adds no trust.
 *
 * smee-client is loaded from node_modules only when the variable is set (scripts/bundle.mjs keeps it out of the
 * bundle), so a server without a proxy parses none of it.
 */
import { z } from "zod";
import type { GatewayLog } from "../../github/transport/octokit-surface.js";

const ProxyUrl = z.url({
  protocol: /^https?$/,
  error: "must be an http(s) URL, such as https://smee.io/<channel>",
});

/** A running relay. */
interface WebhookProxy {
  stop(): Promise<void>;
}

/** The proxy URL from the environment, or null when unset; a malformed one throws, naming the variable. */
export function webhookProxyUrl(env: NodeJS.ProcessEnv): string | null {
  const raw = env.WEBHOOK_PROXY_URL?.trim();
  if (!raw) return null;
  const parsed = ProxyUrl.safeParse(raw);
  if (!parsed.success)
    throw new Error(`WEBHOOK_PROXY_URL ${parsed.error.issues[0]?.message ?? "is not a URL"} (got ${raw}).`);
  return parsed.data;
}

/** Relays the deliveries of `source` to `target` (serve's webhook URL) until stopped. */
export async function startWebhookProxy(
  source: string,
  target: string,
  log: GatewayLog,
): Promise<WebhookProxy> {
  const { SmeeClient } = await import("smee-client");
  const client = new SmeeClient({
    source,
    target,
    // smee-client logs each forwarded delivery at info and connection trouble at error; a lost connection is
    // retried by its event source, so it is a warning here, not an error.
    logger: {
      info: (...parts: unknown[]) => log.debug(`webhook proxy: ${parts.map(String).join(" ")}`),
      error: (...parts: unknown[]) => log.warn(`webhook proxy: ${parts.map(String).join(" ")}`),
    },
  });
  await client.start();
  log.info(`relaying webhooks from ${source} to ${target} (WEBHOOK_PROXY_URL)`);
  return { stop: () => client.stop() };
}
