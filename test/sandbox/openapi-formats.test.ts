/**
 * The sandbox validates requests against GitHub's REST description without printing schema warnings a newcomer
 * cannot act on: every `format` the description uses is known, and a value breaking one is refused.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadOpenApi } from "../../sandbox/emulator/server/openapi.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("GitHub's REST description in the sandbox", () => {
  it("creates a pull request body check with no 'unknown format' warning, and checks head_repo's owner/name", async () => {
    const said: string[] = [];
    for (const level of ["warn", "log", "error"] as const)
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        said.push(args.map(String).join(" "));
      });
    const api = await loadOpenApi();
    const found = api.match("POST", "/repos/demo/shop/pulls");
    expect(found.ok).toBe(true);
    if (!found.ok) return;
    const request = (head_repo: string) => ({
      path: "/repos/demo/shop/pulls",
      query: {},
      headers: { "content-type": "application/json" },
      body: { title: "t", head: "feature", base: "main", head_repo },
    });
    expect(api.validateRequest(found.match, request("demo/shop"))).toEqual([]);
    expect(api.validateRequest(found.match, request("not a repository")).length).toBeGreaterThan(0);
    expect(said.filter((line) => /unknown format/i.test(line))).toEqual([]);
  });
});
