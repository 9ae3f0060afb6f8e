/** How long the reconcile waits for GitHub (and for itself) before it acts again or differently. */

/** A dispatch whose run has not appeared yet counts as live for this long. */
export const DISPATCH_GRACE_MINUTES = 10;
/** A run that succeeded without a visible result is given this long for the result to show before it counts as a crash. */
export const RESULT_GRACE_MINUTES = 2;
/** A cancel that did not take is asked again after this long. */
export const CANCEL_RETRY_MINUTES = 15;
/**
 * A merge that did not happen is tried again after this long: one GitHub refused, or one a controller recorded
 * and was stopped (killed, redeployed) before sending. `mergePr` carries the head SHA, so asking twice is safe.
 */
export const MERGE_RETRY_MINUTES = 2;
/**
 * A dispatch whose run has not appeared after this long is sent once more with the same dispatch id: the
 * controller may have been stopped between recording it and sending it. Runs appear within seconds; the
 * executor reads the runs again just before it re-sends and skips the resend when one carries the id (a run
 * that starts anyway runs under the same id, and the next reconcile cancels the duplicate).
 */
export const DISPATCH_RESEND_MINUTES = 2;
/**
 * A recorded dispatch whose lock ref does not exist either (in a complete list of the locks) was never sent: the
 * executor takes the lock before it sends, so the controller stopped in between. It is sent after this long,
 * taking the lock as a first dispatch does, so a controller still busy sending it (its writes held up by a rate
 * limit, say) and this one cannot both dispatch it: one of them loses the lock.
 */
export const DISPATCH_UNSENT_SECONDS = 30;
/** For this long after Autopilot changed a label or closed an issue, its own record of the change wins over a stale read. */
export const SETTLE_MINUTES = 10;
/** Incidents (state rebuilt, refused checkboxes, …) are shown this long. */
export const INCIDENT_DAYS = 7;
/** With workers running, the dashboard (elapsed times) is refreshed at least this often. */
export const DASHBOARD_REFRESH_MINUTES = 30;
