export * from "./snapshot.js";
export * from "./workerResult.js";
