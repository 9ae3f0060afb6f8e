/**
 * The last step of registering a GitHub App from a manifest: trading the one-time `code` GitHub put on the
 * redirect for the new App's id, private key and webhook secret
 * (https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest, step 3;
 * `POST /app-manifests/{code}/conversions` takes no credentials, the code is single-use and lasts an hour).
 */
import { z } from "zod";
import { createOctokit } from "../transport/octokit.js";

const ConversionSchema = z.object({
  id: z.number().int(),
  slug: z.string().optional(),
  name: z.string(),
  html_url: z.string(),
  pem: z.string().min(1),
  webhook_secret: z.string().nullable(),
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
});

export type AppConversion = z.infer<typeof ConversionSchema>;

export async function convertManifestCode(options: {
  code: string;
  baseUrl: string;
}): Promise<AppConversion> {
  const octokit = createOctokit({ auth: "", baseUrl: options.baseUrl, retry: false, throttle: false });
  const { data } = await octokit.rest.apps.createFromManifest({ code: options.code });
  return ConversionSchema.parse(data);
}
