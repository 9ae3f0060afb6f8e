/**
 * A `fetch` for Octokit's `request.fetch` that checks every request against GitHub's published descriptions
 * before sending it on (to nock, in unit tests): REST against the OpenAPI description (the sandbox's
 * validator, sandbox/emulator/server/openapi.ts), GraphQL documents against GitHub's GraphQL schema as the sandbox loads
 * it (`@octokit/graphql-schema`'s SDL plus the issue-dependency fields github.com serves that the package
 * does not list yet). An invalid request throws, so the test fails at the call GitHub would have rejected.
 */
import { parse, validate } from "graphql";
import nock from "nock";
import { afterEach, beforeAll, beforeEach } from "vitest";
import { type AutopilotOctokit, createOctokit } from "../../src/github/transport/octokit.js";
import { loadGraphqlSchema } from "../../sandbox/emulator/graphql.js";
import { loadOpenApi } from "../../sandbox/emulator/server/openapi.js";

export interface ValidatingFetch {
  fetch: typeof globalThis.fetch;
  /** Every request seen, in order: `GET /repos/{owner}/{repo}/issues` or `POST /graphql AutopilotSnapshot`. */
  seen: string[];
  /** Problems found (each also thrown). */
  problems: string[];
}

class InvalidRequestError extends Error {
  override readonly name = "InvalidRequestError";
}

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init?.headers ?? {}).forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

export async function createValidatingFetch(): Promise<ValidatingFetch> {
  const validator = await loadOpenApi();
  const schema = await loadGraphqlSchema();
  const seen: string[] = [];
  const problems: string[] = [];
  const fail = (message: string): never => {
    problems.push(message);
    throw new InvalidRequestError(message);
  };

  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const method = (init?.method ?? "GET").toUpperCase();
    const path = url.pathname.replace(/^\/api\/v3(?=\/)/, "");
    const rawBody = typeof init?.body === "string" ? init.body : undefined;
    let body: unknown;
    if (rawBody !== undefined) {
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = rawBody;
      }
    }
    if (method === "POST" && (path === "/graphql" || path === "/api/graphql")) {
      const query = (body as { query?: unknown } | undefined)?.query;
      if (typeof query !== "string") fail("POST /graphql without a query");
      const errors = validate(schema, parse(query as string));
      const name = /(?:query|mutation)\s+(\w+)/.exec(query as string)?.[1] ?? "(anonymous)";
      seen.push(`POST /graphql ${name}`);
      if (errors.length > 0) fail(`GraphQL ${name} is invalid: ${errors.map((e) => e.message).join("; ")}`);
    } else {
      const matched = validator.match(method, path);
      if (!matched.ok) {
        fail(
          `${method} ${path}: ${matched.reason === "wrong-method" ? `wrong method (allowed: ${matched.allowed.join(", ")})` : "no such endpoint in GitHub's REST API"}`,
        );
      } else {
        seen.push(matched.match.endpoint);
        const query: Record<string, string | string[]> = {};
        url.searchParams.forEach((value, key) => {
          const previous = query[key];
          query[key] = previous === undefined ? value : ([] as string[]).concat(previous, value);
        });
        const issues = validator.validateRequest(matched.match, {
          path,
          query,
          headers: headersOf(init),
          body,
        });
        if (issues.length > 0) fail(`${matched.match.endpoint}: ${issues.map((i) => i.message).join("; ")}`);
      }
    }
    return globalThis.fetch(input, init);
  }) as typeof globalThis.fetch;

  return { fetch, seen, problems };
}

export interface NockedGitHub {
  /** The file's validating fetch (available from its first test on). */
  readonly validating: ValidatingFetch;
  /** An Octokit on the validating fetch, without throttling or retries (a test sees each answer once). */
  octokit(): AutopilotOctokit;
}

/**
 * For a test file whose GitHub is nock: no real network during a test, nock's answers cleared after each, and
 * every request checked against GitHub's descriptions by one validating fetch loaded for the file.
 */
export function nockGitHub(): NockedGitHub {
  let validating: ValidatingFetch | undefined;
  beforeAll(async () => {
    validating = await createValidatingFetch();
  });
  beforeEach(() => nock.disableNetConnect());
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });
  const loaded = (): ValidatingFetch => {
    if (!validating)
      throw new Error("nockGitHub: the validating fetch is loaded in beforeAll; use it inside a test");
    return validating;
  };
  return {
    get validating() {
      return loaded();
    },
    octokit: () => createOctokit({ auth: "ghs_test", fetch: loaded().fetch, throttle: false, retry: false }),
  };
}
