/** The JSON values shapes are built of, and the formats GitHub writes dates and noreply emails in. */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };
export type JsonObject = { [key: string]: Json | undefined };

/** The noreply address GitHub gives a login (bots get GitHub's own). */
export function noreplyEmail(login: string): string {
  return /^[A-Za-z0-9-]+$/.test(login) ? `${login}@users.noreply.github.com` : "noreply@github.com";
}

/** A date as GitHub writes it: ISO 8601 in UTC, without milliseconds. */
export function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString().replace(/\.\d{3}Z$/, "Z") : null;
}
