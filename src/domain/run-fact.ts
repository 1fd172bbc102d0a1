/** One stored run fact (src/run/run-facts.ts lists the kinds and their schemas): plain data the store, the run floor and the analyses share. */
export interface RunFact {
  kind: string;
  /** ISO time it was recorded */
  at: string;
  /** as recorded; the reader validates it with the schema of its kind */
  data: unknown;
}
