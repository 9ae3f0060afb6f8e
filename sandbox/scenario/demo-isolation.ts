/**
 * The wall the bundled demo's agent runs behind, chosen for the machine `npm start` runs on.
 *
 * A real agent runs behind the namespace sandbox (`isolation: namespace`, the product's default,
 * src/worker/isolation/agent-user.ts), which needs bubblewrap and root or password-less sudo, and the worker
 * refuses to start without them. The demo's agent is Autopilot's own scripted agent (agent/demo-agent.mjs), not
 * a stranger's program, so on a developer's machine without those the demo runs it behind the strongest wall the
 * machine allows instead of failing every worker: the namespace sandbox, else a separate user (`uid`, root or
 * password-less sudo without a working bubblewrap), else none. It writes that choice into the demo repository's
 * own `.github/autopilot.yml` (a scenario's configuration, as any repository's); the product's default and every
 * check stay what they are. The first screen says which wall and what a real agent needs.
 */
import { execFile } from "node:child_process";
import { trustedBinary } from "../../src/worker/isolation/trusted-binaries.js";
import type { Scenario } from "./scenario-file.js";

export type DemoIsolation = "namespace" | "uid" | "none";

/** What the machine allows, as far as the worker's isolation needs it. */
export interface MachineWalls {
  /** The user is root, or has password-less sudo: the worker can create and become a separate user. */
  privileged: boolean;
  /** bubblewrap is installed and a namespace sandbox starts with it (as root, or through `sudo -n`). */
  namespaces: boolean;
}

const PLAIN_ENV = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LANG: "C" };

function succeeds(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(command, args, { env: PLAIN_ENV, timeout: 10_000 }, (error) => resolve(!error));
  });
}

/** Probes this machine the way the worker will: root or `sudo -n`, then a sandbox that really starts. */
export async function probeMachineWalls(): Promise<MachineWalls> {
  const root = process.getuid?.() === 0;
  const sudo = trustedBinary("sudo");
  const privileged = root || (sudo !== null && (await succeeds(sudo, ["-n", "true"])));
  const bwrap = trustedBinary("bwrap");
  if (!privileged || !bwrap) return { privileged, namespaces: false };
  // The namespaces the worker's sandbox unshares (src/worker/isolation/agent-namespace.ts), with its own /proc.
  const sandbox = [
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--",
    "/bin/true",
  ];
  const namespaces = root
    ? await succeeds(bwrap, sandbox)
    : await succeeds(sudo as string, ["-n", "--", bwrap, ...sandbox]);
  return { privileged, namespaces };
}

/** The strongest wall of the three the machine allows. */
export function strongestIsolation(walls: MachineWalls): DemoIsolation {
  if (walls.privileged && walls.namespaces) return "namespace";
  return walls.privileged ? "uid" : "none";
}

/** The scenario with `isolation` set in its repository's configuration, unless the scenario sets it itself. */
export function withDemoIsolation(scenario: Scenario, isolation: DemoIsolation): Scenario {
  const config = scenario.repo.config;
  if (typeof config === "string" || "isolation" in config) return scenario;
  return { ...scenario, repo: { ...scenario.repo, config: { ...config, isolation } } };
}

const REAL_AGENT_NEEDS =
  "A real agent always runs in the namespace sandbox: the worker needs bubblewrap and root or password-less " +
  "sudo (a GitHub-hosted runner has both), and refuses to start without them.";

/** The first screen's lines about the wall: which one, why, and what a real agent needs. */
export function describeDemoIsolation(isolation: DemoIsolation, walls: MachineWalls): string[] {
  if (isolation === "namespace")
    return [
      "Isolation: the demo's agent runs in the namespace sandbox (bubblewrap, as a separate user), as a real agent does.",
    ];
  const missing = walls.privileged
    ? "bubblewrap is not installed or its sandbox does not start here"
    : "this user is not root and has no password-less sudo";
  const wall =
    isolation === "uid"
      ? "as a separate user only (no namespace sandbox)"
      : "as you, with no wall (no separate user, no namespace sandbox)";
  return [
    `Isolation: ${missing}, so the demo's agent runs ${wall}.`,
    "That is acceptable only because it is Autopilot's own scripted agent, for this demo.",
    REAL_AGENT_NEEDS,
  ];
}
