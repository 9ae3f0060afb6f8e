/**
 * `network`: what the agent's sandbox may reach through the worker's egress proxy (src/worker/network/egress-proxy.ts).
 * Entries are parsed by src/core/agent/network-allow.ts, so the schema and the proxy read them the same way.
 */
import { z } from "zod";
import { parseAllowEntry } from "../agent/network-allow.js";
import { EXPECTED } from "./config-constants.js";

const AllowEntrySchema = z.string().superRefine((value, context) => {
  const parsed = parseAllowEntry(value);
  if (!parsed.ok) {
    context.addIssue({
      code: "custom",
      message: parsed.error,
      params: { expected: parsed.error.replace(/^"(?:[^"\\]|\\.)*": /, "") },
    });
  }
});

export const NetworkSchema = z
  .union([
    z.literal("open"),
    z.strictObject({
      allow: z
        .array(AllowEntrySchema)
        .max(200)
        .default([])
        .describe(
          "Hosts the agent may reach besides its preset's model API and the hosts of the base URLs passed in " +
            "`agents.*.env`: `host`, `*.domain` (every name under it), an IPv4 address or `[IPv6]`, each with " +
            "an optional `:port` (without one: ports 80 and 443).",
        ),
    }),
  ])
  .default({ allow: [] })
  .meta({
    description:
      "The agent's network (docs/WORKER.md, *The agent's network*). Its sandbox has none of its own; its one " +
      "way out is the worker's proxy, which lets through the preset's model API, the hosts of the base URLs " +
      "passed in `agents.*.env`, and the hosts `allow` lists: `host`, `*.domain` (every name under it), an " +
      "IPv4 address or `[IPv6]`, each with an optional `:port` (without one: 80 and 443), such as " +
      "`{ allow: [registry.npmjs.org, '127.0.0.1:43123'] }`. Refused hosts are listed in the job summary and " +
      "the progress comment. `open` gives the agent the runner's whole network (named on the dashboard). Only " +
      "`.github/autopilot.yml` on the default branch can set it.",
    [EXPECTED]: '"open" or a mapping { allow: [hosts] }',
  });
