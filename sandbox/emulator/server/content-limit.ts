/**
 * GitHub's secondary rate limit on content creation, as its documentation states it
 * (https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits, the same
 * text on https://docs.github.com/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api): "In general,
 * no more than 80 content-generating requests per minute and no more than 500 content-generating requests per
 * hour are allowed … Content creation limits include actions taken on the GitHub web interface as well as via
 * the REST API and GraphQL API." A request over it is answered 403 or 429 with a message saying a secondary rate
 * limit was exceeded; `retry-after` may be present ("Exceeding the rate limit", same page).
 *
 * What counts as content-generating is not listed by GitHub. The sandbox decides, strictly:
 * - every REST `POST`, `PATCH`, `PUT` and `DELETE` (the requests the docs' best practices call "mutative" and
 *   ask to space out to stay clear of secondary limits,
 *   https://docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api#pause-between-mutative-requests):
 *   issues, comments, labels on issues, pull requests, reviews, merges, refs, workflow dispatches, run cancels;
 * - every GraphQL request whose operation is a mutation;
 * - except the requests that create nothing on GitHub: minting an installation token (GitHub's separate limit
 *   on access-token requests covers those) and rendering Markdown.
 * Pushes over git are not API requests and do not count. Counted per actor (the account a token acts as: the
 * App's bot, `github-actions[bot]` for every workflow token, a person), in sliding windows of one minute and one
 * hour; a refused request creates nothing and is not counted.
 *
 * Off unless a scenario or test switches it on (`faults.contentLimit`); thresholds and the length of a "minute"
 * can be lowered so a scenario reaches the limit, and sees it lift, in seconds.
 */
import { Kind, type OperationDefinitionNode, parse } from "graphql";
import { z } from "zod";

const ContentLimitShape = z
  .object({
    /** Content-generating requests per actor per minute (GitHub: 80). */
    perMinute: z.number().int().min(1).default(80),
    /** Content-generating requests per actor per hour (GitHub: 500). */
    perHour: z.number().int().min(1).default(500),
    /** How many real seconds one "minute" of this limit lasts (an hour is 60 of them); lower it in scenarios. */
    minuteSeconds: z.number().positive().default(60),
    /** Status of the refusal: GitHub documents 403 or 429. */
    status: z.union([z.literal(403), z.literal(429)]).default(403),
    /** Whether the refusal carries `retry-after` (GitHub: "may"); without it a client waits at least a minute. */
    retryAfter: z.boolean().default(true),
  })
  .strict();

/** `contentLimit:` in a scenario's `faults` (true: GitHub's figures). */
export const ContentLimitSchema = z.union([
  z.literal(true).transform(() => ContentLimitShape.parse({})),
  ContentLimitShape,
]);

type ContentLimit = z.infer<typeof ContentLimitShape>;

/** GitHub's message for this limit (the wording integrations that met it report). */
export const CONTENT_LIMIT_MESSAGE =
  "You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later. If you reach out to GitHub Support for help, please include the request ID.";

const MUTATIVE = new Set(["POST", "PATCH", "PUT", "DELETE"]);
/** REST endpoints that write nothing a person would call content. */
const NOT_CONTENT = new Set(["POST /app/installations/{installation_id}/access_tokens", "POST /markdown"]);

/** Whether a REST request (method and OpenAPI path template) generates content. */
export function restCreatesContent(method: string, endpoint: string): boolean {
  return MUTATIVE.has(method.toUpperCase()) && !NOT_CONTENT.has(endpoint);
}

/** Whether a GraphQL request body runs a mutation (an unparsable query creates nothing). */
export function graphqlCreatesContent(body: unknown): boolean {
  if (!body || typeof body !== "object") return false;
  const { query, operationName } = body as { query?: unknown; operationName?: unknown };
  if (typeof query !== "string") return false;
  try {
    const operations = parse(query).definitions.filter(
      (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
    );
    const chosen =
      typeof operationName === "string" && operationName
        ? operations.find((o) => o.name?.value === operationName)
        : operations.length === 1
          ? operations[0]
          : undefined;
    return chosen?.operation === "mutation";
  } catch {
    return false;
  }
}

export interface ContentVerdict {
  allowed: boolean;
  /** Seconds until the actor's windows have room again (only when refused). */
  retryAfterSeconds: number;
  /** Which window refused. */
  window: "minute" | "hour" | null;
}

/** Sliding one-minute and one-hour windows of content-generating requests per actor. */
export class ContentLimiter {
  private readonly times = new Map<string, number[]>();

  constructor(private readonly now: () => number) {}

  /** Counts one content-generating request of `actor`, or refuses it. */
  charge(actor: string, limit: ContentLimit): ContentVerdict {
    const nowMs = this.now();
    const minuteMs = limit.minuteSeconds * 1000;
    const hourMs = minuteMs * 60;
    const kept = (this.times.get(actor) ?? []).filter((t) => nowMs - t < hourMs);
    this.times.set(actor, kept);
    const inMinute = kept.filter((t) => nowMs - t < minuteMs);
    let freeAt: number | null = null;
    let window: ContentVerdict["window"] = null;
    if (kept.length >= limit.perHour) {
      freeAt = kept[kept.length - limit.perHour]! + hourMs;
      window = "hour";
    }
    if (inMinute.length >= limit.perMinute) {
      const at = inMinute[inMinute.length - limit.perMinute]! + minuteMs;
      if (freeAt === null || at > freeAt) freeAt = at;
      window ??= "minute";
    }
    if (freeAt !== null) {
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((freeAt - nowMs) / 1000)), window };
    }
    kept.push(nowMs);
    return { allowed: true, retryAfterSeconds: 0, window: null };
  }

  reset(): void {
    this.times.clear();
  }
}
