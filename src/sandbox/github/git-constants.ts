/** The all-zero object id git uses for "no commit" (a ref's before/after when it is created or deleted). */
export const ZERO_SHA = "0000000000000000000000000000000000000000";
