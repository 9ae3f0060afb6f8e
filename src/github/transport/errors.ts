/**
 * Which GitHub failures mean "GitHub is not answering" (they trip the circuit breaker) and which are ordinary
 * answers (a 404 or 422 is GitHub working fine and telling us no).
 */

type FailureKind = "server" | "network" | "secondary-rate-limit" | "rate-limit" | "client" | "graphql";

interface HttpLikeError {
  status?: unknown;
  message?: unknown;
  name?: unknown;
  response?: { headers?: Record<string, unknown> } | undefined;
  errors?: unknown;
}

export function statusOf(error: unknown): number | null {
  if (typeof error !== "object" || error === null) return null;
  const status = (error as HttpLikeError).status;
  return typeof status === "number" ? status : null;
}

function headerOf(error: unknown, name: string): string | null {
  if (typeof error !== "object" || error === null) return null;
  const value = (error as HttpLikeError).response?.headers?.[name];
  return value === undefined || value === null ? null : String(value);
}

/** GitHub's `retry-after` on a refused request, in seconds; null when the answer has none. */
export function retryAfterOf(error: unknown): number | null {
  const value = headerOf(error, "retry-after");
  if (value === null) return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null && typeof (error as HttpLikeError).message === "string") {
    return (error as HttpLikeError).message as string;
  }
  return String(error);
}

/** Classifies a thrown request error. GraphQL responses with `errors` (HTTP 200) are answers, not outages. */
export function classifyFailure(error: unknown): FailureKind {
  const status = statusOf(error);
  const message = messageOf(error).toLowerCase();
  if (
    typeof error === "object" &&
    error !== null &&
    (error as HttpLikeError).name === "GraphqlResponseError"
  ) {
    const errors = (error as HttpLikeError).errors;
    const rateLimited =
      Array.isArray(errors) && errors.some((e) => (e as { type?: unknown })?.type === "RATE_LIMITED");
    return rateLimited ? "rate-limit" : "graphql";
  }
  if (status === null || status === 0) return "network";
  if (status >= 500) return "server";
  if (status === 429 || ((status === 403 || status === 429) && message.includes("secondary rate limit"))) {
    return "secondary-rate-limit";
  }
  if (status === 403 && (headerOf(error, "retry-after") !== null || message.includes("secondary rate"))) {
    return "secondary-rate-limit";
  }
  if ((status === 403 || status === 429) && headerOf(error, "x-ratelimit-remaining") === "0")
    return "rate-limit";
  return "client";
}

/**
 * Whether GitHub's refusal of a permission lookup (`GET …/collaborators/{username}/permission`) says the login is
 * no collaborator: a 404, or a 403 that is not a rate limit. A secondary or primary rate limit answers 403 as
 * well (docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api): taken for "none", it would make a
 * writer's changes request invisible to the merge gate and their commands refused, and be cached as such. Such
 * an outage is thrown instead, and the reconcile (or the worker's read) fails as for any other outage.
 */
export function isNotCollaborator(error: unknown): boolean {
  const status = statusOf(error);
  return status === 404 || (status === 403 && !isOutage(error));
}

/** Failures that count against the circuit breaker: 5xx, network errors and rate limits. */
export function isOutage(error: unknown): boolean {
  const kind = classifyFailure(error);
  return kind === "server" || kind === "network" || kind === "secondary-rate-limit" || kind === "rate-limit";
}

export function describeError(error: unknown): string {
  const status = statusOf(error);
  const message = messageOf(error).split("\n")[0] ?? "";
  return status === null ? message : `${status} ${message}`;
}

/**
 * GitHub's own words when it refused a request: a GraphQL answer's errors, or a REST answer's `message`; else
 * the error's (the one reading of a refusal, for the executor and src/github/execution/merge-mechanisms.ts).
 */
export function refusalWords(error: unknown): string {
  const e = error as { errors?: { message?: string }[]; response?: { data?: unknown } } | null;
  const graphql = (Array.isArray(e?.errors) ? e.errors : []).map((x) => x?.message ?? "").filter(Boolean);
  if (graphql.length > 0) return graphql.join("; ");
  const message = (e?.response?.data as { message?: unknown } | undefined)?.message;
  return typeof message === "string" && message.trim() ? message : describeError(error);
}

/** Thrown for every call while the breaker is open: reads fail fast, writes are queued by the executor. */
export class CircuitOpenError extends Error {
  override readonly name = "CircuitOpenError";
  constructor(
    readonly retryAt: Date | null,
    readonly lastFailure: string | null,
  ) {
    super(
      `GitHub looks unavailable: the circuit breaker is open${lastFailure ? ` after repeated failures (last: ${lastFailure})` : ""}; ` +
        `calls resume ${retryAt ? `after ${retryAt.toISOString()}` : "later"}.`,
    );
  }
}

export function isCircuitOpen(error: unknown): error is CircuitOpenError {
  return error instanceof CircuitOpenError;
}
