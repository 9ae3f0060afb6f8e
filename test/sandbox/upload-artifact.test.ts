// biome-ignore-all lint/suspicious/noTemplateCurlyInString: GitHub Actions expressions are what these strings test
/**
 * actions/upload-artifact in the sandbox's Actions (sandbox/emulator/actions/upload-artifact.ts): a run keeps the
 * files a step names, the REST API lists them, and the action's own refusals hold (a name the run already has,
 * a name with a slash, no file where `if-no-files-found: error`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActionsRunner, type RunRecord, startActions } from "../../sandbox/emulator/actions/actions.js";
import { attachGit, type SandboxGit } from "../../sandbox/emulator/git/sandbox-git.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

const UPLOAD = "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f";
const WORKFLOW = `name: Keep
on: workflow_dispatch
jobs:
  keep:
    runs-on: ubuntu-latest
    steps:
      - run: mkdir -p out && echo '{"n":1}' > out/figures.json && echo hidden > out/.hidden
      - id: first
        uses: ${UPLOAD}
        with:
          name: figures
          path: out
          retention-days: 200
      - id: again
        continue-on-error: true
        uses: ${UPLOAD}
        with:
          name: figures
          path: out/figures.json
      - id: single
        uses: ${UPLOAD}
        with:
          name: ignored-without-archive
          path: out/figures.json
          archive: false
          overwrite: true
      - id: slash
        continue-on-error: true
        uses: ${UPLOAD}
        with:
          name: a/b
          path: out
      - id: none
        continue-on-error: true
        uses: ${UPLOAD}
        with:
          name: none
          path: missing
          if-no-files-found: error
      - id: quiet
        uses: ${UPLOAD}
        with:
          name: quiet
          path: missing
          if-no-files-found: ignore
      - run: |
          echo "first=\${{ steps.first.outputs.artifact-id }}" >> "$GITHUB_OUTPUT"
          echo "outcomes=\${{ steps.again.outcome }} \${{ steps.slash.outcome }} \${{ steps.none.outcome }} \${{ steps.quiet.outcome }}" >> "$GITHUB_OUTPUT"
`;

let sandbox: Sandbox;
let git: SandboxGit;
let actions: ActionsRunner;
let record: RunRecord;

async function get(path: string): Promise<{ total_count: number; artifacts: Record<string, unknown>[] }> {
  const response = await fetch(`${sandbox.url}${path}`, {
    headers: { authorization: `token ${sandbox.installationToken()}`, accept: "application/vnd.github+json" },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { total_count: number; artifacts: Record<string, unknown>[] };
}

beforeAll(async () => {
  sandbox = await startSandbox();
  git = await attachGit(sandbox);
  sandbox.store.createRepo({ owner: "demo", name: "shop" });
  await git.seedRepo("demo", "shop", { "README.md": "# shop\n", ".github/workflows/keep.yml": WORKFLOW });
  actions = startActions({ url: sandbox.url, store: sandbox.store, git });
  await actions.syncWorkflows("demo/shop");
  const run = sandbox.store.dispatchWorkflow("demo/shop", "keep.yml", {
    ref: "main",
    inputs: {},
    actor: "alice",
  });
  record = await actions.waitForRun((await run).id);
}, 60_000);

afterAll(async () => {
  await actions?.stop();
  await git?.stop();
  await sandbox?.stop();
});

describe("actions/upload-artifact in the sandbox", () => {
  it("keeps a directory's files (hidden ones left out) and lists them with the run", async () => {
    expect(record.conclusion, record.log.join("\n")).toBe("success");
    const listed = await get(`/repos/demo/shop/actions/runs/${record.id}/artifacts`);
    expect(listed.artifacts.map((a) => a.name).sort()).toEqual(["figures", "figures.json"]);
    const figures = listed.artifacts.find((a) => a.name === "figures")!;
    expect(String(figures.id)).toBe(record.outputs.first);
    expect(figures.size_in_bytes).toBe('{"n":1}\n'.length);
    expect((figures.workflow_run as { id: number }).id).toBe(record.id);
    // A retention past the repository's longest is cut to it (90 days).
    const days =
      (Date.parse(String(figures.expires_at)) - Date.parse(String(figures.created_at))) / 86_400_000;
    expect(days).toBe(90);
    const kept = sandbox.store.listArtifacts("demo/shop", { name: "figures" });
    expect(Object.keys(kept[0]!.files)).toEqual(["figures.json"]);
  });

  it("refuses a name the run already holds, a name with a slash, and no file under `if-no-files-found: error`", () => {
    expect(record.outputs.outcomes).toBe("failure failure failure success");
    const log = record.log.join("\n");
    expect(log).toMatch(/\(409\) an artifact with this name already exists on the workflow run/);
    expect(log).toMatch(/The artifact name is not valid: a\/b/);
    expect(log).toMatch(/No files were found with the provided path: missing/);
  });

  it("finds a repository's artifacts by name", async () => {
    const byName = await get("/repos/demo/shop/actions/artifacts?name=figures");
    expect(byName.total_count).toBe(1);
    expect(byName.artifacts[0]!.name).toBe("figures");
    const none = await get("/repos/demo/shop/actions/artifacts?name=quiet");
    expect(none.total_count).toBe(0);
  });
});
