/** What a started sandbox offers its user (tests, scenarios, the CLI), and the options it starts with. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestAccounting, ValidationFailure } from "./accounting.js";
import type { SandboxApp } from "./auth.js";
import type { FaultController, FaultsInput } from "./faults.js";
import type { SandboxStore, StoreOptions, TokenKind } from "../store.js";
import type { WebhookDispatcher } from "./webhooks.js";
import type { WebView } from "../web/web-view.js";

/**
 * A handler mounted under a path prefix (e.g. the git remote under `/git/`). It gets the raw request (body
 * unread) and must answer it. Requests it serves are not validated, counted or faulted by the sandbox.
 */
export type SandboxHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

export interface RateLimits {
  /**
   * Requests per hour of an installation, shared by its tokens (GitHub: 5,000; a declared installation's grows
   * with its repositories, installation-limit.ts).
   */
  installation: number;
  /** Requests per hour of a workflow's GITHUB_TOKEN (GitHub: 1,000). */
  worker: number;
  /** Requests per hour of a user token (GitHub: 5,000). */
  user: number;
  /** Requests per hour with the app JWT. */
  app: number;
  /** GraphQL points per hour (GitHub: 5,000; 1,000 for GITHUB_TOKEN). */
  graphql: number;
}

export interface SandboxOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Passed to the store (clock, app identity). */
  store?: StoreOptions;
  /** Use this store instead of a fresh one. */
  existingStore?: SandboxStore;
  /** Where webhooks go (the Probot app's URL); none until {@link Sandbox.setWebhookTarget}. */
  webhookTarget?: string | null;
  /** Faults from the start. */
  faults?: FaultsInput;
  rateLimits?: Partial<RateLimits>;
  /** Also check successful REST response bodies against the description (tests; records failures). */
  validateResponses?: boolean;
  /** Debug log lines (default: silent). */
  log?: (line: string) => void;
  /** Port of the web pages on 127.0.0.1 (`Sandbox.web`); 0 (default) picks a free one. */
  webPort?: number;
}

export interface Sandbox {
  /** REST root, `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** `${url}/graphql` */
  readonly graphqlUrl: string;
  readonly port: number;
  readonly store: SandboxStore;
  /** The GitHub App: id, slug, PEM private key (PKCS#1), webhook secret, installation id. */
  readonly app: SandboxApp;
  /** Every API request, by endpoint template, method and token kind. */
  readonly requests: RequestAccounting;
  /** Requests the OpenAPI description or GraphQL schema rejected (and unimplemented endpoints). */
  readonly validationFailures: ValidationFailure[];
  /** Throws listing every validation failure so far. */
  assertNoValidationFailures(): void;
  readonly webhooks: WebhookDispatcher;
  /** Sets (or clears with null) the URL webhooks are POSTed to. */
  setWebhookTarget(url: string | null): void;
  readonly faults: FaultController;
  /** Mounts a handler under a path prefix (`/git/`). Returns an unmount function. */
  registerHandler(prefix: string, handler: SandboxHandler): () => void;
  /** Changes the hourly budgets (e.g. a tiny one to demonstrate rate limiting); applies to the next request. */
  setRateLimits(limits: Partial<RateLimits>): void;
  /**
   * A fresh installation access token (as `POST /app/installations/{id}/access_tokens` would mint), of the
   * given installation (default: the default one, store-core.ts `installationId`).
   */
  installationToken(installationId?: number): string;
  /** The token a scenario human uses (`ghp_<login>`). */
  userToken(login: string): string;
  /** Kind of a token as the sandbox sees it, or null when unknown. */
  tokenKind(token: string): TokenKind | null;
  /** The read-only web pages showing the store as GitHub would (their own port on 127.0.0.1). */
  readonly web: WebView;
  /**
   * Closes the server, the web pages and every socket, aborts an in-flight webhook delivery and drops queued
   * ones (await `webhooks.flush()` first to deliver them). Idempotent.
   */
  stop(): Promise<void>;
}
