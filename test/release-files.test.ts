/**
 * The files a release is made of agree: package.json's version is the newest dated section of CHANGELOG.md, with
 * [Unreleased] above it; Dependabot keeps the project's own pins current; the Docker image's base is pinned by
 * digest, labelled, and has `autopilot` on its PATH. Once, the version stayed 0.1.0 across hundreds of lines of
 * changes and the tag init pinned never existed.
 */
import { readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const read = (path: string) => readFileSync(path, "utf8");
const SEMVER = /^(\d+)\.(\d+)\.(\d+)$/;

function compareVersions(a: string, b: string): number {
  const [x, y] = [SEMVER.exec(a)!, SEMVER.exec(b)!];
  for (let i = 1; i <= 3; i++) if (Number(x[i]) !== Number(y[i])) return Number(x[i]) - Number(y[i]);
  return 0;
}

describe("the release files", () => {
  it("CHANGELOG.md: [Unreleased] first, then dated versions newest first, the newest package.json's version", () => {
    const headings = read("CHANGELOG.md")
      .split("\n")
      .filter((line) => line.startsWith("## "));
    expect(headings[0]).toBe("## [Unreleased]");
    const released = headings.slice(1).map((heading) => {
      const match = /^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$/.exec(heading);
      expect(match, `${heading}: expected "## [X.Y.Z] - YYYY-MM-DD"`).not.toBeNull();
      expect(new Date(`${match![2]}T00:00:00Z`).toISOString().slice(0, 10)).toBe(match![2]);
      return { version: match![1]!, date: match![2]! };
    });
    expect(released.length).toBeGreaterThan(0);
    for (let i = 1; i < released.length; i++) {
      expect(compareVersions(released[i - 1]!.version, released[i]!.version)).toBeGreaterThan(0);
      expect(released[i - 1]!.date >= released[i]!.date).toBe(true);
    }
    const pkg = JSON.parse(read("package.json")) as { version: string };
    const lock = JSON.parse(read("package-lock.json")) as {
      version: string;
      packages: Record<string, { version?: string }>;
    };
    expect(pkg.version).toBe(released[0]!.version);
    expect(lock.version).toBe(pkg.version);
    expect(lock.packages[""]?.version).toBe(pkg.version);
  });

  it("the release workflow refuses a version without its dated section", () => {
    const workflow = read(".github/workflows/release.yml");
    expect(workflow).toContain('grep -Eq "^## \\[$version\\] - [0-9]{4}-[0-9]{2}-[0-9]{2}$" CHANGELOG.md');
  });

  it("Dependabot keeps the project's pins current: actions (workflows and templates), npm and the Docker base", () => {
    const config = parse(read(".github/dependabot.yml")) as {
      version: number;
      updates: { "package-ecosystem": string; directory?: string; directories?: string[] }[];
    };
    expect(config.version).toBe(2);
    const dirs = (ecosystem: string) =>
      config.updates
        .filter((u) => u["package-ecosystem"] === ecosystem)
        .flatMap((u) => u.directories ?? (u.directory ? [u.directory] : []));
    expect(dirs("github-actions")).toEqual(expect.arrayContaining(["/", "/templates/workflows"]));
    expect(dirs("npm")).toEqual(["/"]);
    expect(dirs("docker")).toEqual(["/"]);
  });

  it("the Dockerfile: its base pinned by digest, OCI labels, and `autopilot` on PATH", () => {
    const dockerfile = read("Dockerfile");
    const from = dockerfile.split("\n").filter((line) => line.startsWith("FROM "));
    expect(from).toEqual([expect.stringMatching(/^FROM node:24-slim@sha256:[0-9a-f]{64}$/)]);
    const digest = /@(sha256:[0-9a-f]{64})/.exec(from[0]!)![1]!;
    expect(dockerfile).toContain(`org.opencontainers.image.base.digest="${digest}"`);
    for (const label of ["title", "description", "licenses", "version", "revision", "source"])
      expect(dockerfile).toMatch(new RegExp(`org\\.opencontainers\\.image\\.${label}=`));
    // The link is made as root, before the image drops to the `node` user, to a script the image copies.
    const link = dockerfile.indexOf("RUN ln -s /app/bin/autopilot.js /usr/local/bin/autopilot");
    expect(link).toBeGreaterThan(dockerfile.indexOf("COPY bin ./bin"));
    expect(link).toBeLessThan(dockerfile.indexOf("USER node"));
    expect(read("bin/autopilot.js").startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(statSync("bin/autopilot.js").mode & 0o111).not.toBe(0);
  });
});
