import { describe, expect, it } from "vitest";
import { recentLimitWait, resetLimitWaits } from "../../src/github/transport/limit-waits.js";
import {
  createOctokit,
  DO_NOT_RETRY,
  isLoopbackUrl,
  isWriteRequest,
  retryOptions,
  writePacing,
} from "../../src/github/transport/octokit.js";

/** Two comments posted at once through a client of `baseUrl`; returns the order the requests started and ended in. */
async function twoWrites(baseUrl: string): Promise<string[]> {
  const events: string[] = [];
  let n = 0;
  // The first request holds until the second has started, or a second has passed (then the client must be
  // holding the second back): the order never depends on how fast a busy machine gets to the second request.
  let secondStarted = () => {};
  const started = new Promise<void>((resolve) => {
    secondStarted = resolve;
  });
  const fetch = async (): Promise<Response> => {
    const id = ++n;
    events.push(`start ${id}`);
    if (id === 2) secondStarted();
    await Promise.race([started, new Promise((resolve) => setTimeout(resolve, 1_000))]);
    events.push(`end ${id}`);
    return new Response(JSON.stringify({ id }), {
      status: 201,
      headers: { "content-type": "application/json" },
    });
  };
  const octokit = createOctokit({ auth: "ghs_test", baseUrl, fetch, retry: false });
  const post = () =>
    octokit.rest.issues.createComment({ owner: "o", repo: "r", issue_number: 1, body: "hi" });
  await Promise.all([post(), post()]);
  return events;
}

describe("the spacing of writes", () => {
  it("knows the loopback from GitHub", () => {
    expect(isLoopbackUrl("http://127.0.0.1:4567")).toBe(true);
    expect(isLoopbackUrl("http://localhost:4567/api/v3")).toBe(true);
    expect(isLoopbackUrl("http://[::1]:4567")).toBe(true);
    expect(isLoopbackUrl("https://api.github.com")).toBe(false);
    expect(isLoopbackUrl("https://github.example.com/api/v3")).toBe(false);
    expect(isLoopbackUrl(undefined)).toBe(false);
    expect(writePacing("https://api.github.com")).toEqual({});
  });

  it("keeps GitHub's one write at a time on github.com", async () => {
    expect(await twoWrites("https://api.github.com")).toEqual(["start 1", "end 1", "start 2", "end 2"]);
  });

  it("lets writes to the sandbox on the loopback go out without waiting for one another", async () => {
    expect(await twoWrites("http://127.0.0.1:4567")).toEqual(["start 1", "start 2", "end 1", "end 2"]);
  });
});

describe("a secondary rate limit (GitHub's content-creation limit among them)", () => {
  const refusal = () =>
    new Response(
      JSON.stringify({
        message:
          "You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later.",
      }),
      { status: 403, headers: { "content-type": "application/json", "retry-after": "1" } },
    );

  it("is waited out, longer each time, until the write goes through once", async () => {
    resetLimitWaits();
    const sent: string[] = [];
    // The window is taken again by the account's other writers three times before this write gets in.
    const fetch = async (_url: unknown, init?: RequestInit): Promise<Response> => {
      sent.push(String(init?.body));
      if (sent.length <= 3) return refusal();
      return new Response(JSON.stringify({ id: 7 }), {
        status: 201,
        headers: { "content-type": "application/json" },
      });
    };
    const extraWaits: number[] = [];
    const octokit = createOctokit({
      auth: "ghs_test",
      baseUrl: "http://127.0.0.1:4567",
      fetch,
      retry: false,
      sleep: async (ms) => {
        extraWaits.push(ms);
      },
    });
    const created = await octokit.rest.issues.createComment({
      owner: "o",
      repo: "r",
      issue_number: 1,
      body: "progress",
    });
    expect(created.data).toEqual({ id: 7 });
    // Four sends of the same comment, three of them refused (a refused write creates nothing): one comment.
    expect(sent).toHaveLength(4);
    // retry-after (1 s, waited by the throttling plugin) times 2^n: 1 s, 2 s, 4 s.
    expect(extraWaits).toEqual([1000, 3000]);
    // The reconcile can tell the dashboard why things are slow.
    expect(recentLimitWait("http://127.0.0.1:4567", Date.now())).not.toBeNull();
    expect(recentLimitWait("https://api.github.com", Date.now())).toBeNull();
  });

  it("gives up after its retries, with the error", async () => {
    const fetch = async (): Promise<Response> => refusal();
    const octokit = createOctokit({
      auth: "ghs_test",
      baseUrl: "http://127.0.0.1:4567",
      fetch,
      retry: false,
      secondaryLimitRetries: 1,
      sleep: async () => {},
    });
    await expect(
      octokit.rest.issues.createComment({ owner: "o", repo: "r", issue_number: 1, body: "x" }),
    ).rejects.toMatchObject({ status: 403 });
  });
});

describe("a secondary rate limit met by the controller (mode pause)", () => {
  const refusal = (retryAfter: string) =>
    new Response(
      JSON.stringify({
        message:
          "You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later.",
      }),
      { status: 403, headers: { "content-type": "application/json", "retry-after": retryAfter } },
    );
  const created = () =>
    new Response(JSON.stringify({ id: 7 }), { status: 201, headers: { "content-type": "application/json" } });

  function controllerClient(answers: Response[], sent: string[]) {
    const fetch = async (_url: unknown, init?: RequestInit): Promise<Response> => {
      sent.push(String(init?.body));
      return answers.shift() ?? created();
    };
    return createOctokit({
      auth: "ghs_test",
      baseUrl: "http://127.0.0.1:4567",
      fetch,
      retry: false,
      secondaryLimit: "pause",
      sleep: async () => {
        throw new Error("the controller never waits longer than retry-after in a request");
      },
    });
  }
  const post = (octokit: ReturnType<typeof createOctokit>) =>
    octokit.rest.issues.createComment({ owner: "o", repo: "r", issue_number: 1, body: "reply" });

  it("hands a long retry-after to the gateway at once, without retrying in the request", async () => {
    resetLimitWaits();
    const sent: string[] = [];
    const started = Date.now();
    await expect(post(controllerClient([refusal("60")], sent))).rejects.toMatchObject({
      status: 403,
      response: { headers: { "retry-after": "60" } },
    });
    expect(sent).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    // The dashboard still says why writes wait.
    const wait = recentLimitWait("http://127.0.0.1:4567", Date.now());
    expect(wait && wait.until - wait.at).toBe(60_000);
  });

  it("pauses writes only: a read, a GraphQL query included, is waited for in the request as the worker does", () => {
    expect(
      isWriteRequest({ method: "POST", url: "/repos/{owner}/{repo}/issues/{issue_number}/comments" }),
    ).toBe(true);
    expect(isWriteRequest({ method: "DELETE", url: "/repos/{owner}/{repo}/git/refs/{ref}" })).toBe(true);
    expect(
      isWriteRequest({ method: "POST", url: "/graphql", query: "\nmutation AutopilotPinIssue($id: ID!) {}" }),
    ).toBe(true);
    expect(
      isWriteRequest({
        method: "POST",
        url: "/graphql",
        query: "query AutopilotSnapshot { viewer { login } }",
      }),
    ).toBe(false);
    expect(isWriteRequest({ method: "GET", url: "/repos/{owner}/{repo}/issues" })).toBe(false);
  });

  it("retries once after a short retry-after, and gives up if refused again", async () => {
    const once: string[] = [];
    expect((await post(controllerClient([refusal("1")], once))).data).toEqual({ id: 7 });
    expect(once).toHaveLength(2);
    const twice: string[] = [];
    await expect(post(controllerClient([refusal("1"), refusal("1")], twice))).rejects.toMatchObject({
      status: 403,
    });
    expect(twice).toHaveLength(2);
  });
});

describe("answers that are decisions, not hiccups", () => {
  /** How many requests one call makes through a retrying client when GitHub answers `status`. */
  async function sent(status: number): Promise<number> {
    let calls = 0;
    const fetch = async (): Promise<Response> => {
      calls++;
      return new Response(JSON.stringify({ message: "At least 1 approving review is required" }), {
        status,
        headers: { "content-type": "application/json" },
      });
    };
    const octokit = createOctokit({ auth: "ghs_test", baseUrl: "http://127.0.0.1:4567", fetch, retry: true });
    await expect(
      octokit.request("PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge", {
        owner: "o",
        repo: "r",
        pull_number: 3,
      }),
    ).rejects.toMatchObject({ status });
    return calls;
  }

  it("sends a merge GitHub refused (405) or whose head moved (409) once: Autopilot decides when to ask again", async () => {
    expect(await sent(405)).toBe(1);
    expect(await sent(409)).toBe(1);
  });

  it("gives the Probot app's client the same list", () => {
    expect(retryOptions(true)).toEqual({ enabled: true, doNotRetry: [...DO_NOT_RETRY] });
    expect(DO_NOT_RETRY).toEqual(expect.arrayContaining([405, 409, 422]));
  });
});
