/**
 * Injected faults, reproducible from a seed: 5xx answers, secondary-rate-limit 403 bursts with
 * `retry-after`, GitHub's content-creation limit when switched on, and dropped, duplicated and reordered webhook
 * deliveries. Request faults hit only the
 * chosen token kinds (default: installation and worker tokens), never the scenario's humans.
 */
import { z } from "zod";
import { ContentLimiter, ContentLimitSchema, type ContentVerdict } from "./content-limit.js";
import type { TokenKind } from "../store.js";

/** The faults object, programmatic or from a scenario file's `faults:` key. */
export const FaultsSchema = z
  .object({
    /** Seed of the fault PRNG: the same seed and the same request sequence give the same faults. */
    seed: z.number().int().default(1),
    /** Fraction (0–1) of REST/GraphQL requests answered with a 5xx. */
    serverErrorRate: z.number().min(0).max(1).default(0),
    /** Status of those answers. */
    serverErrorStatus: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).default(502),
    /** Fraction (0–1) of requests that start a secondary-rate-limit burst. */
    secondaryRateLimitRate: z.number().min(0).max(1).default(0),
    /** How many consecutive requests (of the affected token kinds) a burst rejects. */
    secondaryRateLimitBurst: z.number().int().min(1).default(1),
    /** `retry-after` seconds sent with secondary-rate-limit 403s. */
    retryAfterSeconds: z.number().int().min(0).default(1),
    /** Fraction (0–1) of webhook deliveries silently dropped. */
    webhookDropRate: z.number().min(0).max(1).default(0),
    /** Fraction (0–1) of webhook deliveries sent twice (same delivery id, as GitHub redeliveries). */
    webhookDuplicateRate: z.number().min(0).max(1).default(0),
    /** Deliveries are shuffled within windows of this many queued deliveries (0/1 = in order). */
    webhookReorderWindow: z.number().int().min(0).default(0),
    /** Token kinds request faults apply to (never `user`: the scenario's humans). */
    tokenKinds: z.array(z.enum(["app", "installation", "worker"])).default(["installation", "worker"]),
    /** Only these endpoints (`GET /repos/{owner}/{repo}/issues`, `POST /graphql`); all when absent. */
    endpoints: z.array(z.string()).optional(),
    /**
     * GitHub's secondary limit on content creation (sandbox/emulator/server/content-limit.ts): `true` for GitHub's
     * figures (80 a minute, 500 an hour per actor), or lower ones. Applies to the token kinds above.
     */
    contentLimit: ContentLimitSchema.optional(),
    /** Owned by the Actions stand-in (kill a run mid-way); passed through untouched here. */
    killRun: z.unknown().optional(),
  })
  .strict();

type Faults = z.infer<typeof FaultsSchema>;
export type FaultsInput = z.input<typeof FaultsSchema>;

/** mulberry32: a small, fast, seedable PRNG. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type RequestFault =
  | { type: "server-error"; status: number }
  | { type: "secondary-rate-limit"; retryAfter: number };

interface FaultStats {
  serverErrors: number;
  secondaryRateLimits: number;
  /** Content-generating requests refused by the content-creation limit. */
  contentLimited: number;
  webhooksDropped: number;
  webhooksDuplicated: number;
  webhooksReordered: number;
}

export class FaultController {
  private faults: Faults = FaultsSchema.parse({});
  private requestRandom = seededRandom(1);
  private webhookRandom = seededRandom(1 ^ 0x9e3779b9);
  private burstLeft = 0;
  readonly stats: FaultStats = {
    serverErrors: 0,
    secondaryRateLimits: 0,
    contentLimited: 0,
    webhooksDropped: 0,
    webhooksDuplicated: 0,
    webhooksReordered: 0,
  };

  private readonly content: ContentLimiter;

  /** `now`: the sandbox's clock, in epoch milliseconds (the content-creation windows run on it). */
  constructor(initial?: FaultsInput, now: () => number = Date.now) {
    this.content = new ContentLimiter(now);
    if (initial) this.set(initial);
  }

  /** Replaces the faults (validated with {@link FaultsSchema}) and reseeds the PRNGs. */
  set(input: FaultsInput): Faults {
    this.faults = FaultsSchema.parse(input);
    this.requestRandom = seededRandom(this.faults.seed);
    this.webhookRandom = seededRandom(this.faults.seed ^ 0x9e3779b9);
    this.burstLeft = 0;
    this.content.reset();
    return this.faults;
  }

  /** No faults. */
  clear(): void {
    this.set({});
  }

  get current(): Faults {
    return this.faults;
  }

  /** Decides whether one request fails, and how. Consumes PRNG draws only for affected requests. */
  forRequest(kind: TokenKind | "none", endpoint: string): RequestFault | null {
    const f = this.faults;
    if (kind === "none" || kind === "user") return null;
    if (!f.tokenKinds.includes(kind)) return null;
    if (f.endpoints && !f.endpoints.includes(endpoint)) return null;
    if (this.burstLeft > 0) {
      this.burstLeft -= 1;
      this.stats.secondaryRateLimits += 1;
      return { type: "secondary-rate-limit", retryAfter: f.retryAfterSeconds };
    }
    if (f.secondaryRateLimitRate > 0 && this.requestRandom() < f.secondaryRateLimitRate) {
      this.burstLeft = f.secondaryRateLimitBurst - 1;
      this.stats.secondaryRateLimits += 1;
      return { type: "secondary-rate-limit", retryAfter: f.retryAfterSeconds };
    }
    if (f.serverErrorRate > 0 && this.requestRandom() < f.serverErrorRate) {
      this.stats.serverErrors += 1;
      return { type: "server-error", status: f.serverErrorStatus };
    }
    return null;
  }

  /**
   * Charges one content-generating request of `actor` (the account its token acts as) against the
   * content-creation limit; null when the limit is off or does not apply to this token kind.
   */
  forContent(
    kind: TokenKind | "none",
    actor: string,
  ): (ContentVerdict & { status: 403 | 429; sendRetryAfter: boolean }) | null {
    const limit = this.faults.contentLimit;
    if (!limit || kind === "none" || kind === "user" || !this.faults.tokenKinds.includes(kind)) return null;
    const verdict = this.content.charge(actor.toLowerCase(), limit);
    if (!verdict.allowed) this.stats.contentLimited += 1;
    return { ...verdict, status: limit.status, sendRetryAfter: limit.retryAfter };
  }

  /** Whether to drop a delivery, and how many copies to send otherwise. */
  forDelivery(): { drop: boolean; copies: number } {
    const f = this.faults;
    if (f.webhookDropRate > 0 && this.webhookRandom() < f.webhookDropRate) {
      this.stats.webhooksDropped += 1;
      return { drop: true, copies: 0 };
    }
    if (f.webhookDuplicateRate > 0 && this.webhookRandom() < f.webhookDuplicateRate) {
      this.stats.webhooksDuplicated += 1;
      return { drop: false, copies: 2 };
    }
    return { drop: false, copies: 1 };
  }

  /** Picks which of `queued` pending deliveries goes next (0 unless reordering). */
  nextIndex(queued: number): number {
    const window = Math.min(this.faults.webhookReorderWindow, queued);
    if (window <= 1) return 0;
    const index = Math.floor(this.webhookRandom() * window);
    if (index !== 0) this.stats.webhooksReordered += 1;
    return index;
  }
}
