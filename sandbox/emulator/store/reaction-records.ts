/** Reactions, on issues, their comments and pull request review comments. */
import { encodeNodeId } from "./node-ids.js";

export interface Reaction {
  id: number;
  nodeId: string;
  user: string;
  content: ReactionContent;
  createdAt: Date;
}
export type ReactionContent = "+1" | "-1" | "laugh" | "confused" | "heart" | "hooray" | "rocket" | "eyes";

/**
 * GitHub's "create reaction": one reaction per user and content on a subject; asking again answers with the
 * existing one (200, not 201) (docs.github.com/en/rest/reactions/reactions). `nextId` is called only for a new one.
 */
export function reactOnce(
  list: Reaction[],
  user: string,
  content: ReactionContent,
  nextId: () => number,
  at: Date,
): { reaction: Reaction; created: boolean } {
  const existing = list.find((r) => r.user.toLowerCase() === user.toLowerCase() && r.content === content);
  if (existing) return { reaction: existing, created: false };
  const id = nextId();
  const reaction: Reaction = { id, nodeId: encodeNodeId("Reaction", id), user, content, createdAt: at };
  list.push(reaction);
  return { reaction, created: true };
}
