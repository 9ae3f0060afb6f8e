/**
 * The sandbox's HTTP server: routing to mounted handlers (git), GraphQL and REST, with authentication,
 * faults, rate limits, OpenAPI validation and accounting in front of every API request.
 */
import { createHash } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { GraphQLSchema } from "graphql";
import {
  type RateResource,
  RateLimiter,
  RequestAccounting,
  type ValidationFailure,
  assertNoValidationFailures,
  rateLimitHeaders,
} from "./accounting.js";
import { setupHandlers } from "./app-setup.js";
import {
  type ApiCall,
  DOCS,
  documentationUrl,
  lowerHeaders,
  queryObject,
  type Reply,
  readBody,
  sendReply,
} from "./api-wire.js";
import { type Identity, type SandboxApp, authenticateRequest } from "./auth.js";
import { CONTENT_LIMIT_MESSAGE, graphqlCreatesContent, restCreatesContent } from "./content-limit.js";
import { FaultController } from "./faults.js";
import { primaryLimit } from "./installation-limit.js";
import { graphqlRequestCost, loadGraphqlSchema, runGraphql } from "../graphql.js";
import { type OpenApiValidator, loadOpenApi } from "./openapi.js";
import { type RestReply, type RestRequest, authorizeRepoOperation, restHandlers } from "../rest/index.js";
import type { RateLimits, Sandbox, SandboxHandler, SandboxOptions } from "./sandbox-api.js";
import { type Json, Shapes } from "../shapes.js";
import { type SandboxStore, StoreError } from "../store.js";
import { WebhookDispatcher } from "./webhooks.js";

export type { Sandbox, SandboxOptions } from "./sandbox-api.js";

/** The caller of an endpoint that needs no credentials. */
const ANONYMOUS: Identity = { kind: "user", login: "", bucket: "anonymous", token: null };

const DEFAULT_LIMITS: RateLimits = { installation: 5000, worker: 1000, user: 5000, app: 5000, graphql: 5000 };

export class SandboxServer {
  readonly store: SandboxStore;
  readonly app: SandboxApp;
  readonly accounting = new RequestAccounting();
  readonly validationFailures: ValidationFailure[] = [];
  readonly faults: FaultController;
  readonly rateLimiter: RateLimiter;
  limits: RateLimits;
  private readonly options: SandboxOptions;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly mounts = new Map<string, SandboxHandler>();
  private shapes: Shapes | null = null;
  private webhooks: WebhookDispatcher | null = null;
  private openapi: OpenApiValidator | null = null;
  private schema: GraphQLSchema | null = null;
  private unsubscribe: (() => void) | null = null;
  private stopping: Promise<void> | null = null;
  private baseUrl = "";
  private port = 0;

  constructor(init: { store: SandboxStore; app: SandboxApp; options: SandboxOptions }) {
    this.store = init.store;
    this.app = init.app;
    this.options = init.options;
    this.faults = new FaultController(init.options.faults, () => this.store.clock().getTime());
    this.rateLimiter = new RateLimiter(() => this.store.clock());
    this.limits = { ...DEFAULT_LIMITS, ...(init.options.rateLimits ?? {}) };
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        this.log(`internal error: ${(error as Error).stack ?? String(error)}`);
        if (!res.headersSent) {
          res.writeHead(500, { "content-type": "application/json; charset=utf-8" });
          res.end(JSON.stringify({ message: "Server Error", documentation_url: DOCS, status: "500" }));
        } else {
          res.destroy();
        }
      });
    });
    this.server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    this.server.keepAliveTimeout = 1000;
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  /** Loads GitHub's description and schema (cached per process) and listens on 127.0.0.1. */
  async listen(port: number): Promise<void> {
    const [openapi, schema] = await Promise.all([loadOpenApi(), loadGraphqlSchema()]);
    this.openapi = openapi;
    this.schema = schema;
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, "127.0.0.1", () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.baseUrl = `http://127.0.0.1:${this.port}`;
    this.shapes = new Shapes(this.store, this.baseUrl);
    this.webhooks = new WebhookDispatcher({
      store: this.store,
      shapes: this.shapes,
      app: this.app,
      faults: this.faults,
      ...(this.options.log ? { log: this.options.log } : {}),
    });
    if (this.options.webhookTarget) this.webhooks.setTarget(this.options.webhookTarget);
    const dispatcher = this.webhooks;
    this.unsubscribe = this.store.onEvent((event) => dispatcher.enqueue(event));
  }

  toSandbox(): Omit<Sandbox, "web"> {
    const webhooks = this.webhooks!;
    return {
      url: this.baseUrl,
      graphqlUrl: `${this.baseUrl}/graphql`,
      port: this.port,
      store: this.store,
      app: this.app,
      requests: this.accounting,
      validationFailures: this.validationFailures,
      assertNoValidationFailures: () => assertNoValidationFailures(this.validationFailures),
      webhooks,
      setWebhookTarget: (url) => webhooks.setTarget(url),
      faults: this.faults,
      registerHandler: (prefix, handler) => {
        const normalized = prefix.startsWith("/") ? prefix : `/${prefix}`;
        this.mounts.set(normalized, handler);
        return () => {
          if (this.mounts.get(normalized) === handler) this.mounts.delete(normalized);
        };
      },
      setRateLimits: (limits) => {
        this.limits = { ...this.limits, ...limits };
      },
      installationToken: (installationId) =>
        this.store.issueInstallationToken(installationId === undefined ? {} : { installationId }).token,
      userToken: (login) => this.store.userToken(login),
      tokenKind: (token) => {
        const result = authenticateRequest(this.store, this.app, `token ${token}`);
        return result.ok ? result.identity.kind : null;
      },
      stop: () => this.stop(),
    };
  }

  /** Closes the server and every socket, stops webhook deliveries. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.unsubscribe?.();
      await this.webhooks?.stop();
      await new Promise<void>((resolve) => {
        this.server.close(() => resolve());
        this.server.closeAllConnections();
        for (const socket of this.sockets) socket.destroy();
      });
    })();
    return this.stopping;
  }

  // ---------------------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.baseUrl);
    const mount = this.findMount(url.pathname);
    if (mount) {
      await mount(req, res, url);
      return;
    }
    const raw = await readBody(req);
    const headers = lowerHeaders(req);
    let body: unknown;
    if (raw.length) {
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        sendReply(res, {
          status: 400,
          headers: {},
          body: { message: "Problems parsing JSON", documentation_url: DOCS, status: "400" },
        });
        return;
      }
    }
    const method = (req.method ?? "GET").toUpperCase();
    if (url.pathname === "/graphql" || url.pathname === "/api/graphql") {
      await this.handleGraphql({ res, method, url, headers, body });
      return;
    }
    await this.handleRest({ res, method, url, headers, body });
  }

  private findMount(path: string): SandboxHandler | undefined {
    let best: { prefix: string; handler: SandboxHandler } | undefined;
    for (const [prefix, handler] of this.mounts) {
      if (path.startsWith(prefix) && (!best || prefix.length > best.prefix.length))
        best = { prefix, handler };
    }
    return best?.handler;
  }

  private record(
    endpoint: string,
    method: string,
    path: string,
    identity: Identity | null,
    status: number,
    charged: boolean,
    points?: number,
    graphqlRepo?: string,
  ): void {
    // Which repository a request concerns (REST: its path; GraphQL: the query's owner and name variables) and
    // which installation paid for it: what a benchmark across an organization counts (bench/org-scale.ts).
    const restRepo = /^\/repos\/([^/]+)\/([^/?]+)/.exec(path);
    const repo = graphqlRepo ?? (restRepo ? `${restRepo[1]}/${restRepo[2]}`.toLowerCase() : undefined);
    const installationId = identity?.token?.installationId ?? undefined;
    this.accounting.record({
      endpoint,
      method,
      path,
      tokenKind: identity?.kind ?? "none",
      login: identity?.login ?? null,
      status,
      charged,
      at: this.store.clock(),
      ...(points !== undefined ? { points } : {}),
      ...(repo ? { repo } : {}),
      ...(installationId ? { installationId } : {}),
    });
  }

  private fail(
    kind: "rest" | "graphql",
    method: string,
    path: string,
    endpoint: string | null,
    message: string,
    errors: unknown[],
  ): void {
    this.validationFailures.push({ kind, method, path, endpoint, message, errors, at: this.store.clock() });
    this.log(`validation failure: ${method} ${path}: ${message}`);
  }

  limitFor(identity: Identity, resource: RateResource): number {
    return primaryLimit(identity, resource, this.limits, this.store);
  }

  /**
   * Authentication, faults, the primary rate limit and (for a content-generating request, `createsContent`)
   * the content-creation limit: a reply when the request stops here.
   */
  private gate(
    headers: Record<string, string>,
    endpoint: string,
    resource: RateResource,
    charge: boolean,
    createsContent: boolean,
    cost = 1,
  ): { identity: Identity | null; stop: Reply | null; rate: Record<string, string>; charged: boolean } {
    const auth = authenticateRequest(this.store, this.app, headers.authorization);
    if (!auth.ok) {
      return {
        identity: null,
        stop: {
          status: 401,
          headers: {},
          body: { message: auth.message, documentation_url: DOCS, status: "401" },
        },
        rate: {},
        charged: false,
      };
    }
    const identity = auth.identity;
    const fault = this.faults.forRequest(identity.kind, endpoint);
    if (fault?.type === "server-error") {
      return {
        identity,
        stop: {
          status: fault.status,
          headers: {},
          body: { message: "Server Error", documentation_url: DOCS, status: String(fault.status) },
        },
        rate: {},
        charged: false,
      };
    }
    const limit = this.limitFor(identity, resource);
    const state = charge
      ? this.rateLimiter.consume(identity.bucket, resource, limit, cost)
      : { ...this.rateLimiter.peek(identity.bucket, resource, limit), exceeded: false };
    const rate = rateLimitHeaders(state);
    // What the primary rate limit counted: a refused request (limit already spent) is not charged.
    const charged = charge && !state.exceeded;
    if (fault?.type === "secondary-rate-limit") {
      return {
        identity,
        stop: {
          status: 403,
          headers: { ...rate, "retry-after": String(fault.retryAfter) },
          body: {
            message:
              "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.",
            documentation_url:
              "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
            status: "403",
          },
        },
        rate,
        charged,
      };
    }
    if (state.exceeded) {
      const who =
        identity.kind === "installation"
          ? `installation ID ${identity.token?.installationId}`
          : identity.kind === "user"
            ? `user ID ${this.store.getUser(identity.login)?.id ?? 0}`
            : identity.kind === "worker"
              ? "the GITHUB_TOKEN"
              : `app ID ${this.app.id}`;
      return {
        identity,
        stop: {
          status: 403,
          headers: rate,
          body: {
            message: `API rate limit exceeded for ${who}. If you reach out to GitHub Support for help, please include the request ID.`,
            documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            status: "403",
          },
        },
        rate,
        charged,
      };
    }
    const content = createsContent ? this.faults.forContent(identity.kind, identity.login) : null;
    if (content && !content.allowed) {
      // https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit:
      // 403 or 429, a message naming a secondary rate limit, and possibly `retry-after`.
      return {
        identity,
        stop: {
          status: content.status,
          headers: {
            ...rate,
            ...(content.sendRetryAfter ? { "retry-after": String(content.retryAfterSeconds) } : {}),
          },
          body: {
            message: CONTENT_LIMIT_MESSAGE,
            documentation_url:
              "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits",
            status: String(content.status),
          },
        },
        rate,
        charged,
      };
    }
    return { identity, stop: null, rate, charged };
  }

  private async handleRest({ res, method, url, headers, body }: ApiCall): Promise<void> {
    const openapi = this.openapi!;
    const path = url.pathname;
    const matched = openapi.match(method, path);
    if (!matched.ok) {
      const message =
        matched.reason === "unknown-endpoint"
          ? `Not Found: ${method} ${path} is not an endpoint of GitHub's REST API (no path of the OpenAPI description matches)`
          : `Not Found: ${method} is not allowed on ${path} (the OpenAPI description allows ${matched.allowed.join(", ")})`;
      this.fail("rest", method, path, null, message, []);
      const auth = authenticateRequest(this.store, this.app, headers.authorization);
      this.record(`${method} (unknown) ${path}`, method, path, auth.ok ? auth.identity : null, 404, false);
      sendReply(res, {
        status: 404,
        headers: {},
        body: { message: "Not Found", errors: [{ message }], documentation_url: DOCS, status: "404" },
      });
      return;
    }
    const match = matched.match;
    const free = match.operationId === "rate-limit/get";
    // The manifest conversion is called without credentials: the one-time code is the credential
    // (https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest).
    const gate =
      match.operationId === "apps/create-from-manifest" && !headers.authorization
        ? { identity: ANONYMOUS, stop: null, rate: {}, charged: false }
        : this.gate(headers, match.endpoint, "core", !free, restCreatesContent(method, match.endpoint));
    if (gate.stop) {
      this.record(match.endpoint, method, path, gate.identity, gate.stop.status, gate.charged);
      sendReply(res, gate.stop);
      return;
    }
    const identity = gate.identity!;
    const query = queryObject(url);
    const issues = openapi.validateRequest(match, { path, query, headers, body });
    if (issues.length) {
      const missing = issues.filter((i) => /must have required property/.test(i.message));
      const status = 422;
      const message = `Invalid request.\n\n${issues.map((i) => i.message).join("\n")}`;
      this.fail(
        "rest",
        method,
        path,
        match.endpoint,
        message,
        issues.flatMap((i) => i.errors),
      );
      this.record(match.endpoint, method, path, identity, status, gate.charged);
      sendReply(res, {
        status,
        headers: gate.rate,
        body: {
          message,
          errors: issues.map((i) => ({
            resource: match.operationId,
            code: missing.includes(i) ? "missing_field" : "invalid",
            message: i.message,
          })),
          documentation_url: documentationUrl(match),
          status: String(status),
        },
      });
      return;
    }
    const handler = setupHandlers[match.operationId] ?? restHandlers[match.operationId];
    if (!handler) {
      const message = `The sandbox does not implement ${match.endpoint} (${match.operationId}).`;
      this.fail("rest", method, path, match.endpoint, message, []);
      this.record(match.endpoint, method, path, identity, 501, gate.charged);
      sendReply(res, {
        status: 501,
        headers: gate.rate,
        body: { message, documentation_url: documentationUrl(match), status: "501" },
      });
      return;
    }
    const restRequest: RestRequest = {
      store: this.store,
      shapes: this.shapes!,
      app: this.app,
      identity,
      match,
      params: match.params,
      query: Object.fromEntries(
        Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : v]),
      ),
      body,
      headers,
      url,
      rateLimiter: this.rateLimiter,
      limitFor: (id, resource) => this.limitFor(id, resource),
    };
    let reply: RestReply;
    try {
      authorizeRepoOperation(restRequest);
      reply = await handler(restRequest);
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      reply = {
        status: error.status,
        body: {
          message: error.message,
          ...(error.errors.length ? { errors: error.errors as Json } : {}),
          documentation_url: documentationUrl(match),
          status: String(error.status),
        },
      };
    }
    if (free) {
      const state = this.rateLimiter.peek(identity.bucket, "core", this.limitFor(identity, "core"));
      Object.assign(gate.rate, rateLimitHeaders(state));
    }
    const out: Reply = { status: reply.status, headers: { ...gate.rate, ...(reply.headers ?? {}) } };
    if (reply.text !== undefined) out.text = reply.text;
    else if (reply.body !== undefined) out.body = reply.body;
    // GitHub sends an ETag with its GET answers, and answers a request whose If-None-Match names the current one
    // with 304 Not Modified, which "does not count against your primary rate limit"
    // (https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate).
    if (method === "GET" && reply.status === 200 && reply.body !== undefined) {
      const etag = `W/"${createHash("sha1").update(JSON.stringify(reply.body)).digest("hex")}"`;
      out.headers.etag = etag;
      if (headers["if-none-match"] === etag) {
        this.rateLimiter.refund(identity.bucket, "core");
        const state = this.rateLimiter.peek(identity.bucket, "core", this.limitFor(identity, "core"));
        this.record(match.endpoint, method, path, identity, 304, false);
        sendReply(res, { status: 304, headers: { ...rateLimitHeaders(state), etag } });
        return;
      }
    }
    if (this.options.validateResponses && reply.body !== undefined && reply.status < 300) {
      const problems = this.openapi!.validateResponse(match, reply.status, reply.body);
      if (problems.length) {
        this.fail(
          "rest",
          method,
          path,
          match.endpoint,
          `response does not match the description: ${problems.map((p) => p.message).join("; ")}`,
          problems.flatMap((p) => p.errors),
        );
      }
    }
    this.record(match.endpoint, method, path, identity, reply.status, gate.charged);
    sendReply(res, out);
  }

  private async handleGraphql({ res, method, url, headers, body }: ApiCall): Promise<void> {
    const endpoint = "POST /graphql";
    if (method !== "POST") {
      this.fail("graphql", method, url.pathname, null, `GraphQL is served on POST only, not ${method}`, []);
      this.record(`${method} (unknown) /graphql`, method, url.pathname, null, 404, false);
      sendReply(res, {
        status: 404,
        headers: {},
        body: { message: "Not Found", documentation_url: DOCS, status: "404" },
      });
      return;
    }
    const request =
      body && typeof body === "object"
        ? (body as { query?: unknown; variables?: unknown; operationName?: unknown })
        : {};
    // GraphQL is charged in points by what the query asks for, not per request (graphql/graphql-cost.ts).
    const cost = graphqlRequestCost(request);
    const gate = this.gate(headers, endpoint, "graphql", true, graphqlCreatesContent(body), cost);
    if (gate.stop) {
      this.record(endpoint, method, url.pathname, gate.identity, gate.stop.status, gate.charged);
      const stop = gate.stop;
      if (stop.status === 401)
        stop.body = {
          message: "This endpoint requires you to be authenticated.",
          documentation_url:
            "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql",
          status: "401",
        };
      sendReply(res, stop);
      return;
    }
    const identity = gate.identity!;
    if (identity.kind === "app") {
      this.record(endpoint, method, url.pathname, identity, 403, gate.charged);
      sendReply(res, {
        status: 403,
        headers: gate.rate,
        body: { message: "Resource not accessible by integration", documentation_url: DOCS, status: "403" },
      });
      return;
    }
    const rate = this.rateLimiter.peek(identity.bucket, "graphql", this.limitFor(identity, "graphql"));
    const outcome = await runGraphql(
      { store: this.store, shapes: this.shapes!, identity, schema: this.schema!, rate, cost },
      request,
    );
    if (outcome.invalid.length) {
      this.fail("graphql", method, url.pathname, endpoint, outcome.invalid.join("\n"), [
        String(request.query ?? ""),
      ]);
    }
    if (outcome.unimplemented.length) {
      this.fail(
        "graphql",
        method,
        url.pathname,
        endpoint,
        `fields the sandbox does not serve: ${outcome.unimplemented.join(", ")}`,
        [String(request.query ?? "")],
      );
    }
    const vars = (request.variables ?? {}) as { owner?: unknown; name?: unknown };
    const graphqlRepo =
      typeof vars.owner === "string" && typeof vars.name === "string"
        ? `${vars.owner}/${vars.name}`.toLowerCase()
        : undefined;
    this.record(endpoint, method, url.pathname, identity, 200, gate.charged, cost, graphqlRepo);
    sendReply(res, { status: 200, headers: gate.rate, body: outcome.body as Json });
  }
}
