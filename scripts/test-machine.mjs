#!/usr/bin/env node
// What the tests need of the machine beyond Node and npm, checked before anything runs (`npm test` runs this
// first, as `pretest`; .ci/run runs it before `npm ci`): Debian's packages are installed when this runs as root
// with apt-get, and otherwise each missing piece is named with how to get it, and nothing runs.
//   node scripts/test-machine.mjs           install what is missing (root with apt-get), or name it and exit 1
//   node scripts/test-machine.mjs --check   only name what is missing (exit 1 when something is)
// Plain Node with no dependency, since .ci/run runs it before `npm ci`.
import { execFileSync, spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** The programs the tests run, the Debian package of each, and why they need it. */
const PACKAGES = [
  {
    program: "bwrap",
    pkg: "bubblewrap",
    why: "the namespace sandbox every agent, setup and quality command runs in (the worker's default)",
  },
  {
    program: "sudo",
    pkg: "sudo",
    why: "the isolation tests run the agent as another user the way a GitHub-hosted runner allows",
  },
  {
    program: "redis-server",
    pkg: "redis-server",
    why: "the server replicas share their work through it (started by the tests on 127.0.0.1)",
  },
  {
    program: "chromium",
    pkg: "chromium",
    why: "the headless browser the web-view, registration and dashboard tests drive",
    // test/helpers/chromium.ts: CHROMIUM_PATH names another browser.
    elsewhere: process.env.CHROMIUM_PATH,
  },
];

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** On PATH, or in the system directories a normal user's PATH may leave out (useradd is in /usr/sbin). */
function onPath(program) {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/sbin"];
  return dirs.filter(Boolean).some((dir) => executable(join(dir, program)));
}

function missingPackages() {
  return PACKAGES.filter((p) => !onPath(p.program) && !(p.elsewhere && executable(p.elsewhere)));
}

const root = process.getuid?.() === 0;
const checkOnly = process.argv.includes("--check");
let missing = missingPackages();
if (missing.length > 0 && root && !checkOnly && onPath("apt-get")) {
  const names = missing.map((p) => p.pkg);
  console.log(`Installing the Debian packages the tests need: ${names.join(", ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...names], {
    stdio: "inherit",
    env,
  });
  missing = missingPackages();
}

const problems = missing.map(
  (p) => `${p.program}: install Debian's \`${p.pkg}\` (apt-get install -y ${p.pkg}) — ${p.why}`,
);
// The isolation tests create users (useradd) and become them (setpriv): root, or a user with password-less sudo.
if (!root && spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status !== 0)
  problems.push(
    "root or password-less sudo: the isolation tests create the agent's users (useradd) and run commands as them; " +
      "run the tests as root or as a user with password-less sudo (as on a GitHub-hosted runner)",
  );
for (const program of ["setpriv", "useradd", "git"])
  if (!onPath(program)) problems.push(`${program}: install it (Debian: util-linux, passwd, git)`);

if (problems.length > 0) {
  console.error("The tests cannot run on this machine yet; missing:");
  for (const problem of problems) console.error(`  - ${problem}`);
  process.exit(1);
}
