import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface Session {
  token: string;
  /** Unix seconds. */
  expires_at: number;
  api_url: string;
  user_id?: string;
  login?: string;
}

export interface Settings {
  'api-url'?: string;
  output?: 'text' | 'json';
}

export const SETTING_KEYS = ['api-url', 'output'] as const;

export interface StateStore {
  dir: string;
  readSession(): Promise<Session | null>;
  writeSession(session: Session): Promise<void>;
  clearSession(): Promise<void>;
  readSettings(): Promise<Settings>;
  writeSettings(settings: Settings): Promise<void>;
}

/** `${XDG_CONFIG_HOME:-~/.config}/payments/`: the token (mode 0600, it is a credential) and settings. */
export function createStateStore(env: NodeJS.ProcessEnv): StateStore {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  const dir = join(base, 'payments');
  const sessionFile = join(dir, 'session.json');
  const settingsFile = join(dir, 'config.json');

  const readJson = async <T>(file: string): Promise<T | null> => {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as T;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return null;
      throw error;
    }
  };
  // Written under a temporary name then renamed, so a crash never leaves half a token, and created 0600.
  const writeJson = async (file: string, value: unknown, mode: number) => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode });
    await chmod(temporary, mode);
    await rename(temporary, file);
  };

  return {
    dir,
    readSession: () => readJson<Session>(sessionFile),
    writeSession: (session) => writeJson(sessionFile, session, 0o600),
    clearSession: () => rm(sessionFile, { force: true }),
    readSettings: async () => (await readJson<Settings>(settingsFile)) ?? {},
    writeSettings: (settings) => writeJson(settingsFile, settings, 0o600),
  };
}
