import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { cpuBetween, type CpuUsage } from '../harness/cpu-accounting.js';
import { runHttpLoad, type HttpLoadResult } from '../harness/http-load.js';
import { runClosedLoop } from '../harness/load.js';
import { signUp } from '../harness/users.js';
import type { BenchContext } from './bench-context.js';

export interface LoginResult {
  login: HttpLoadResult;
  cpu: CpuUsage | null;
  /** argon2id verifications per second in this process, with identity's cost settings and the same concurrency. */
  argon2VerifyPerSecond: number;
}

/** OWASP's minimum for argon2id (19 MiB, 2 passes, 1 lane), the cost identity hashes passwords with. */
const ARGON2ID_OWASP = { algorithm: 2 as Algorithm, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/** Logins of one user through the gateway, and the machine's own argon2id rate as their ceiling. */
export async function runLogin(context: BenchContext, connections: number): Promise<LoginResult> {
  const { target, seconds } = context;
  const user = await signUp(target.gatewayUrl, 'login');
  const before = await context.sampleCpu();
  // Raw (autocannon): the measured logins; the client's per-call work in this process would distort them.
  const login = await runHttpLoad({
    url: `${target.gatewayUrl}/auth/login`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: user.username, password: user.password }),
    connections,
    seconds,
  });
  const cpu = cpuBetween(before, await context.sampleCpu());
  const stored = await hash(user.password, ARGON2ID_OWASP);
  let verified = 0;
  const elapsed = await runClosedLoop(connections, Math.min(seconds, 5) * 1000, async () => {
    if (await verify(stored, user.password)) verified += 1;
  });
  return { login, cpu, argon2VerifyPerSecond: verified / (elapsed / 1000) };
}
