/** Git values the sandbox's store and git remote share. */

/** The SHA git reports for a ref that does not exist: a push's `before` when it creates the ref, `after` when it deletes it. */
export const ZERO_SHA = "0000000000000000000000000000000000000000";
