/**
 * Thrown by a replica's reconcile handler for a shared job it will not run because it is stopping: the job goes
 * back to the queue for another replica (replica-work.ts). Its own module, so the embedded app (app.ts) names it
 * without loading the queue engine.
 */
export class ReplicaStopping extends Error {
  constructor() {
    super("this replica is stopping; the reconcile goes back to the queue for another");
  }
}
