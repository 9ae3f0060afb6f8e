/** GitHub refuses issue and comment bodies over 65,536 characters. */
export const GITHUB_BODY_LIMIT = 65_536;
