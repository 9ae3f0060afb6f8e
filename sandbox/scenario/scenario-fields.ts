/**
 * Value types several parts of a scenario file share: the report states an issue ends in, a GitHub login, an
 * issue number.
 */
import { z } from "zod";

/** The states a task issue is reported in (sandbox/scenario/scenario-observer.ts `reportState`). */
export const REPORT_STATES = [
  "done",
  "blocked",
  "needs-human",
  "timeout",
  "failed",
  "ready",
  "in-progress",
  "review",
] as const;
export type ReportState = (typeof REPORT_STATES)[number];

export const login = z
  .string()
  // An app's bot account is named `<app-slug>[bot]` on GitHub (its comments and labels are a person's to play too).
  .regex(
    /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/,
    "a GitHub login (letters, digits and hyphens; an app's bot ends in [bot])",
  );
export const issueNumber = z.number().int().positive();
