/**
 * Who is calling: the app (RS256 JWT signed with the app's private key), an installation token (`ghs_…`),
 * a workflow's GITHUB_TOKEN (kind `worker`) or a scenario human (`ghp_<login>`).
 */
import { type KeyObject, createPublicKey, generateKeyPairSync, randomBytes, verify } from "node:crypto";
import type { SandboxStore, TokenInfo, TokenKind } from "../store.js";

export interface SandboxApp {
  id: number;
  slug: string;
  name: string;
  /** Owner login of the app (and the account of its default installation). */
  owner: string;
  clientId: string;
  /** PEM (PKCS#1 `-----BEGIN RSA PRIVATE KEY-----`), as GitHub hands out. */
  privateKey: string;
  publicKey: KeyObject;
  webhookSecret: string;
  /** The default installation's id (store-core.ts `installationId`). */
  installationId: number;
}

/** Generates the app's RSA key pair and webhook secret for a store's app identity. */
export function createSandboxApp(store: SandboxStore): SandboxApp {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  return {
    id: store.app.id,
    slug: store.app.slug,
    name: store.app.name,
    owner: store.app.owner,
    clientId: `Iv23sandbox${store.app.id}`,
    privateKey,
    publicKey: createPublicKey(privateKey),
    webhookSecret: randomBytes(20).toString("hex"),
    installationId: store.installationId,
  };
}

/** The caller of one request. */
export interface Identity {
  kind: TokenKind;
  /** Acting login (`<slug>[bot]` for the app and installation, `github-actions[bot]` for workers). */
  login: string;
  /**
   * Key for the rate-limit bucket: every token of one installation shares the installation's
   * (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#primary-rate-limit-for-github-app-installations).
   */
  bucket: string;
  token: TokenInfo | null;
}

type AuthResult = { ok: true; identity: Identity } | { ok: false; status: 401; message: string };

function base64urlJson(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  } catch {
    return null;
  }
}

/** Verifies an app JWT as GitHub does: RS256 over the app key, `iss` = app id or client id, exp ≤ 10 min. */
function verifyAppJwt(
  app: SandboxApp,
  jwt: string,
  now: Date,
): { ok: true } | { ok: false; message: string } {
  const parts = jwt.split(".");
  if (parts.length !== 3) return { ok: false, message: "A JSON web token could not be decoded" };
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = base64urlJson(headerPart);
  const payload = base64urlJson(payloadPart);
  if (!header || typeof header !== "object" || !payload || typeof payload !== "object") {
    return { ok: false, message: "A JSON web token could not be decoded" };
  }
  if ((header as { alg?: unknown }).alg !== "RS256") {
    return { ok: false, message: "A JSON web token could not be decoded" };
  }
  const valid = verify(
    "sha256",
    Buffer.from(`${headerPart}.${payloadPart}`),
    app.publicKey,
    Buffer.from(signaturePart, "base64url"),
  );
  if (!valid) {
    return {
      ok: false,
      message: "A JSON web token could not be decoded",
    };
  }
  const claims = payload as { iss?: unknown; iat?: unknown; exp?: unknown };
  if (String(claims.iss) !== String(app.id) && String(claims.iss) !== app.clientId) {
    return { ok: false, message: `'Issuer' claim ('iss') must be an Integer` };
  }
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (typeof claims.exp !== "number" || typeof claims.iat !== "number") {
    return {
      ok: false,
      message:
        "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
    };
  }
  if (claims.exp <= nowSeconds) {
    return {
      ok: false,
      message:
        "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
    };
  }
  if (claims.exp - nowSeconds > 600 + 30) {
    return { ok: false, message: "'Expiration time' claim ('exp') is too far in the future" };
  }
  if (claims.iat > nowSeconds + 60) {
    return {
      ok: false,
      message:
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
    };
  }
  return { ok: true };
}

/** Extracts the credential from `Authorization: token X | Bearer X | Basic base64(user:X)`. */
function credentialOf(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^(\w+)\s+(.+)$/.exec(header.trim());
  if (!match) return null;
  const scheme = match[1]!.toLowerCase();
  const value = match[2]!.trim();
  if (scheme === "token" || scheme === "bearer") return value;
  if (scheme === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 ? decoded.slice(colon + 1) : decoded;
  }
  return null;
}

/** Identifies the caller of a request; unauthenticated and unknown credentials are 401s like GitHub's. */
export function authenticateRequest(
  store: SandboxStore,
  app: SandboxApp,
  authorization: string | undefined,
): AuthResult {
  const credential = credentialOf(authorization);
  if (!credential) return { ok: false, status: 401, message: "Requires authentication" };
  if (credential.split(".").length === 3 && credential.startsWith("eyJ")) {
    const verdict = verifyAppJwt(app, credential, store.clock());
    if (!verdict.ok) return { ok: false, status: 401, message: verdict.message };
    return {
      ok: true,
      identity: { kind: "app", login: `${app.slug}[bot]`, bucket: `app:${app.id}`, token: null },
    };
  }
  const info = store.authenticate(credential);
  if (!info) return { ok: false, status: 401, message: "Bad credentials" };
  const bucket =
    info.kind === "installation"
      ? `installation:${info.installationId}`
      : info.kind === "user"
        ? `user:${info.login.toLowerCase()}`
        : `worker:${info.runId}`;
  return { ok: true, identity: { kind: info.kind, login: info.login, bucket, token: info } };
}
