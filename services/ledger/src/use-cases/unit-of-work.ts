/** The operations `U` of one database transaction, run together: committed at the end, rolled back by a throw. */
export interface UnitOfWork<U> {
  /** Runs `work` in one database transaction; a deadlock victim is retried from the start. */
  inTransaction<T>(work: (unit: U) => Promise<T>): Promise<T>;
}

/** Work an event causes, taking effect once however often the event arrives (the inbox). */
export interface OncePerEvent<U> {
  /**
   * Records events in the inbox and runs `work` for the ones never processed before, in one database transaction
   * with their inbox records. Returns the ids that took effect now.
   */
  processEventsOnce(
    eventIds: string[],
    work: (unit: U, fresh: ReadonlySet<string>) => Promise<void>,
  ): Promise<ReadonlySet<string>>;
}
