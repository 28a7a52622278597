import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export interface ComposeContainersOptions {
  /** Stopped containers too (`docker ps -a`): a replica killed on purpose is still one of the service's. */
  includeStopped?: boolean;
  timeoutMs?: number;
}

/** The names of the containers docker compose runs for `service` in `project`, sorted. */
export async function composeContainers(
  project: string,
  service: string,
  { includeStopped = false, timeoutMs = 60_000 }: ComposeContainersOptions = {},
): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    'docker',
    [
      'ps',
      ...(includeStopped ? ['-a'] : []),
      '--filter',
      `label=com.docker.compose.project=${project}`,
      '--filter',
      `label=com.docker.compose.service=${service}`,
      '--format',
      '{{.Names}}',
    ],
    { timeout: timeoutMs },
  );
  return stdout.trim().split('\n').filter(Boolean).sort();
}
