/**
 * A text with every held secret's value replaced by `***` before it is kept (the agent's transcript,
 * src/worker/job/transcript.ts), in each form the push guard looks for (secret-leak.ts `secretForms`: plain,
 * base64 and base64url, also inside a longer stream, hex, URL-encoded), so what one refuses to push the
 * other never keeps.
 */
import { MIN_SECRET_LENGTH, secretForms } from "./secret-leak.js";

export function maskSecrets(text: string, values: readonly string[]): string {
  const forms = new Set<string>();
  for (const value of values) {
    if (value.length < MIN_SECRET_LENGTH) continue;
    for (const form of secretForms(value)) if (form.length >= MIN_SECRET_LENGTH) forms.add(form);
  }
  // Longest first: a value that contains another is masked whole.
  let masked = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) masked = masked.split(form).join("***");
  return masked;
}
