/**
 * Why `autopilot register` refused where it would write the App's credentials, before it registered anything
 * (exit code 2: the person fixes the flag or the folder and runs it again).
 */
export class CredentialsTargetError extends Error {
  override name = "CredentialsTargetError";
}
