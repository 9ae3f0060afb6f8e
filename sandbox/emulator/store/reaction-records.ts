/** Reactions, on issues, their comments and pull request review comments. */
export interface Reaction {
  id: number;
  nodeId: string;
  user: string;
  content: ReactionContent;
  createdAt: Date;
}
export type ReactionContent = "+1" | "-1" | "laugh" | "confused" | "heart" | "hooray" | "rocket" | "eyes";
