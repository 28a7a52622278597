export interface ConsoleBuild {
  /** Whether a build ran (false: dist/ was newer than every source). */
  built: boolean;
  /** Why it ran or did not, for one line of output. */
  reason: string;
}

/**
 * Builds the console unless dist/ is newer than its sources (the console's and the client's it bundles);
 * `onBuild` hears why before a build starts.
 */
export declare function ensureConsoleBuilt(options?: {
  onBuild?: (reason: string) => void;
}): Promise<ConsoleBuild>;

/** Builds the console now, in a child process (Vite's memory leaves with it); rejects with its output. */
export declare function buildConsole(): Promise<void>;
