/**
 * Which sub-issues an epic's ready label approves, by when and by whom each was linked to the parent. Anyone with
 * triage access can link any issue as a sub-issue
 * (https://docs.github.com/en/issues/tracking-your-work-with-issues/using-issues/adding-sub-issues), so being a
 * sub-issue is no approval by itself: the writer who labeled the parent approved the sub-issues it held then,
 * those linked before the label. One linked since counts only when a person with write access linked it; an
 * outsider's old issue a triager links after the label is not the writer's choice, whenever it was opened.
 * src/core/reconcile/epic-pooling.ts pools by this; src/github/permissions.ts looks up the linkers it asks about.
 */
import type { SubIssueLink } from "../world.js";

/** A sub-issue the parent's label does not approve, and why. */
export interface LinkRefusal {
  issue: number;
  /**
   * Who linked it, not before the label: a login without write access, or null for a deleted account. Absent
   * when its link is not among the parent's timeline events the snapshot read (when and by whom is unknown).
   */
  linkedBy?: string | null;
}

/**
 * Whether the link came before the label. GitHub gives both times to the second, so a link in the label's own
 * second is not known to come before it; with the label's time unknown, no link is.
 */
export function linkedBeforeLabel(link: Pick<SubIssueLink, "at">, labeledAt: string | null): boolean {
  const linked = Date.parse(link.at);
  const labeled = Date.parse(labeledAt ?? "");
  return !Number.isNaN(linked) && !Number.isNaN(labeled) && linked < labeled;
}

/**
 * Splits the sub-issues an epic would pool into those its label approves and those it does not: approved when
 * linked before the label, or linked since by a writer.
 */
export function judgeSubIssueLinks(input: {
  candidates: readonly number[];
  links: readonly SubIssueLink[];
  /** The time of the writer's ready label on the parent; null when unknown. */
  labeledAt: string | null;
  isWriter: (login: string) => boolean;
}): { approved: number[]; refused: LinkRefusal[] } {
  const newest = new Map<number, SubIssueLink>();
  for (const link of input.links) {
    const seen = newest.get(link.issue);
    if (!seen || Date.parse(link.at) >= Date.parse(seen.at)) newest.set(link.issue, link);
  }
  const approved: number[] = [];
  const refused: LinkRefusal[] = [];
  for (const issue of input.candidates) {
    const link = newest.get(issue);
    if (!link) refused.push({ issue });
    else if (linkedBeforeLabel(link, input.labeledAt) || (link.by !== null && input.isWriter(link.by)))
      approved.push(issue);
    else refused.push({ issue, linkedBy: link.by });
  }
  return { approved, refused };
}

/** The checklist's reason for a refused sub-issue (`quiet` renders a login without notifying it). */
export function linkRefusalText(refusal: LinkRefusal, quiet: (login: string) => string): string {
  if (refusal.linkedBy === undefined)
    return "when it was linked is unknown (not among the parent's timeline events read), so the epic's label does not approve it";
  if (refusal.linkedBy === null) return "linked by a deleted account, and not before the epic's label";
  return `linked by ${quiet(refusal.linkedBy)}, who has no write access, and not before the epic's label`;
}
