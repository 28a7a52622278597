import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
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

/** The profile used when none is named: its files are the state directory's own, as before profiles. */
export const DEFAULT_PROFILE = 'default';

/** A profile's name: also a directory's, so nothing that could leave the state directory. */
export const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/i;

export interface StateStore {
  /** The profile's directory: its session and settings. */
  dir: string;
  profile: string;
  readSession(): Promise<Session | null>;
  writeSession(session: Session): Promise<void>;
  clearSession(): Promise<void>;
  readSettings(): Promise<Settings>;
  writeSettings(settings: Settings): Promise<void>;
}

/** `${XDG_CONFIG_HOME:-~/.config}/payments/`, where every profile keeps its state. */
export function stateRoot(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'payments');
}

/**
 * A profile's token (mode 0600, it is a credential) and settings: the default profile's in
 * `${XDG_CONFIG_HOME:-~/.config}/payments/`, any other's in `payments/profiles/<name>/`. Each has its own API URL
 * and session, so logging in to one environment never replaces, or sends, another's token.
 */
export function createStateStore(env: NodeJS.ProcessEnv, profile: string = DEFAULT_PROFILE): StateStore {
  if (!PROFILE_NAME.test(profile)) throw new TypeError(`Not a profile name: ${profile}`);
  const root = stateRoot(env);
  const dir = profile === DEFAULT_PROFILE ? root : join(root, 'profiles', profile);
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
    await mkdir(root, { recursive: true, mode: 0o700 });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode });
    await chmod(temporary, mode);
    await rename(temporary, file);
  };

  return {
    dir,
    profile,
    readSession: () => readJson<Session>(sessionFile),
    writeSession: (session) => writeJson(sessionFile, session, 0o600),
    clearSession: () => rm(sessionFile, { force: true }),
    readSettings: async () => (await readJson<Settings>(settingsFile)) ?? {},
    writeSettings: (settings) => writeJson(settingsFile, settings, 0o600),
  };
}

/** The profiles that hold any state: the default one, and each directory under `profiles/` with a valid name. */
export async function listProfiles(env: NodeJS.ProcessEnv): Promise<string[]> {
  const named = await readdir(join(stateRoot(env), 'profiles'), { withFileTypes: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    },
  );
  const names = named
    .filter((entry) => entry.isDirectory() && PROFILE_NAME.test(entry.name))
    .map((e) => e.name);
  return [DEFAULT_PROFILE, ...names.filter((name) => name !== DEFAULT_PROFILE).sort()];
}
