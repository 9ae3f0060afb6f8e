/**
 * The wall the bundled demo's agent runs behind, chosen for the machine `npm start` runs on.
 *
 * A real agent runs behind the namespace sandbox (`isolation: namespace`, the product's default,
 * src/worker/isolation/agent-user.ts), which needs bubblewrap and root or password-less sudo, and the worker
 * refuses to start without them. The demo's agent is Autopilot's own scripted agent (agent/demo-agent.mjs), not
 * a stranger's program, so on a developer's machine without those the demo runs it behind the strongest wall the
 * machine allows instead of failing every worker: the namespace sandbox; else, for a user without root or
 * password-less sudo where the kernel lets any user create namespaces (Debian's and Ubuntu's default), bubblewrap
 * in an unprivileged user namespace, which the demo agent enters itself (`--user-namespace`,
 * agent/demo-agent.mjs) since the worker then runs it with `isolation: none`; else a separate user (`uid`, root
 * or password-less sudo without a working bubblewrap); else none. It writes that choice into the demo
 * repository's own `.github/autopilot.yml` (a scenario's configuration, as any repository's); the product's
 * default and every check stay what they are. The first screen says which wall and what a real agent needs.
 */
import { execFile } from "node:child_process";
import { trustedBinary } from "../../src/worker/isolation/trusted-binaries.js";
import type { Scenario } from "./scenario-file.js";

export type DemoIsolation = "namespace" | "user-namespace" | "uid" | "none";

/** What the machine allows, as far as the worker's isolation needs it. */
export interface MachineWalls {
  /** The user is root, or has password-less sudo: the worker can create and become a separate user. */
  privileged: boolean;
  /** bubblewrap is installed and a namespace sandbox starts with it (as root, or through `sudo -n`). */
  namespaces: boolean;
  /** Where bubblewrap is, when it starts a sandbox as this user, unprivileged, in a user namespace of its own. */
  userNamespaceBwrap: string | null;
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
  if (!bwrap) return { privileged, namespaces: false, userNamespaceBwrap: null };
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
  if (!privileged) {
    const unprivileged = await succeeds(bwrap, ["--unshare-user", ...sandbox]);
    return { privileged, namespaces: false, userNamespaceBwrap: unprivileged ? bwrap : null };
  }
  const namespaces = root
    ? await succeeds(bwrap, sandbox)
    : await succeeds(sudo as string, ["-n", "--", bwrap, ...sandbox]);
  return { privileged, namespaces, userNamespaceBwrap: null };
}

/** The strongest wall of the three the machine allows. */
export function strongestIsolation(walls: MachineWalls): DemoIsolation {
  if (walls.privileged && walls.namespaces) return "namespace";
  if (!walls.privileged && walls.userNamespaceBwrap) return "user-namespace";
  return walls.privileged ? "uid" : "none";
}

/**
 * The scenario with `isolation` set in its repository's configuration, unless the scenario sets it itself. In a
 * user namespace the worker runs the agent with `isolation: none` and the demo agent enters the sandbox itself.
 */
export function withDemoIsolation(
  scenario: Scenario,
  isolation: DemoIsolation,
  walls: MachineWalls,
): Scenario {
  const config = scenario.repo.config;
  if (typeof config === "string" || "isolation" in config) return scenario;
  if (isolation === "user-namespace" && walls.userNamespaceBwrap) {
    const command = `{demo_agent} --user-namespace ${walls.userNamespaceBwrap}`;
    const agents = { primary: { preset: "custom", command } };
    return { ...scenario, repo: { ...scenario.repo, config: { ...config, isolation: "none", agents } } };
  }
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
  const wall = {
    "user-namespace":
      "as you, in an unprivileged user-namespace sandbox (its own processes, no network, the machine read-only but its work tree)",
    uid: "as a separate user only (no namespace sandbox)",
    none: "as you, with no wall (no separate user, no namespace sandbox)",
  }[isolation];
  return [
    `Isolation: ${missing}, so the demo's agent runs ${wall}.`,
    "That is acceptable only because it is Autopilot's own scripted agent, for this demo.",
    REAL_AGENT_NEEDS,
  ];
}
