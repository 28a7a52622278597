import { createPrivateKey, randomUUID, sign, type KeyObject } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { createPaymentsClient } from '@payments/client';
import { developmentKeyPath } from '@payments/identity';
import { TokenKeysConfig } from '@payments/service-kit';
import { bearerCall } from '../harness/http-client.js';
import { sleep } from '../harness/load.js';
import { signUp } from '../harness/users.js';
import type { Check } from './adversarial-checks.js';
import type { AdversarialContext } from './adversarial-drill.js';

/** The longest a verifier may trust a key identity removed: its key set's default maximum age. */
const REFRESH_BOUND_MS = TokenKeysConfig.JWKS_REFRESH_SECONDS.default * 1000;
const V1_1 = { 'x-api-version': '1.1' };

/** Requests a signed-in user (or an admin) makes; a token that still verified would get past the 401. */
const TARGETS = [
  { method: 'GET', path: '/accounts' },
  { method: 'POST', path: '/accounts', json: { currency: 'USD' } },
  { method: 'GET', path: '/admin/users' },
] as const;

export interface KeyAttackOutcome {
  injected: string;
  operations: Record<string, number>;
  /** Requests made with a token of the removed key. */
  attempts: number;
  checks: Check[];
}

/**
 * The expired-key attack: an attacker holds a user's token, an admin's token and the signing key itself (leaked).
 * Identity's operators remove that key (the drill deletes the development key under DATA_DIR and restarts identity,
 * which then signs with a new one); from then on the stolen tokens, and tokens freshly forged with the leaked key,
 * are tried against the gateway. Run before any other client signs up, so no honest token dies with the key.
 */
export async function runExpiredKeyAttack(context: AdversarialContext): Promise<KeyAttackOutcome> {
  const { target, log } = context;
  const system = target.system;
  if (!system)
    throw new Error('the expired-key attack restarts identity: it needs a system the drill started');
  const operations: Record<string, number> = {};
  const count = (what: string) => {
    operations[`expired keys: ${what}`] = (operations[`expired keys: ${what}`] ?? 0) + 1;
  };

  const victim = await signUp(target.gatewayUrl, 'key_victim');
  const { token: adminToken } = await createPaymentsClient({ baseUrl: target.gatewayUrl }).auth.login(
    context.admin,
  );
  const keyFile = developmentKeyPath(system.environment('identity').DATA_DIR as string);
  const leaked = createPrivateKey(await readFile(keyFile, 'utf8'));
  const forgeAdmin = () => forgeLike(adminToken, leaked);
  const beforeRemoval = await answer(context, 'GET', '/admin/users', forgeAdmin());

  log('adversarial drill: removing the signing key an attacker leaked (identity restarts with a new one)');
  await rm(keyFile);
  await system.restart('identity');
  const removedAt = Date.now();
  let refusedAfterMs: number | null = null;
  while (Date.now() - removedAt <= REFRESH_BOUND_MS + 5000) {
    if ((await answer(context, 'GET', '/accounts', victim.token)).status === 401) {
      refusedAfterMs = Date.now() - removedAt;
      break;
    }
    await sleep(100);
  }

  const tokens = {
    "a user's stolen token": victim.token,
    "an admin's stolen token": adminToken,
    'an admin token forged with the leaked key': forgeAdmin(),
  };
  const accepted: string[] = [];
  for (const [what, token] of Object.entries(tokens)) {
    for (const { method, path, ...call } of TARGETS) {
      const { status } = await answer(context, method, path, token, 'json' in call ? call.json : undefined);
      count('attack requests');
      count(status === 401 ? 'refused (401)' : `answered ${status}`);
      if (status !== 401) accepted.push(`${what}: ${method} ${path} answered ${status}`);
    }
  }
  const { token: fresh } = await victim.client.auth.login({
    username: victim.username,
    password: victim.password,
  });
  const freshAnswer = await answer(context, 'GET', '/accounts', fresh);

  const attempts = operations['expired keys: attack requests'] ?? 0;
  return {
    injected:
      'an attacker holding a user token, an admin token and the signing key itself; identity restarted without ' +
      'that key, then every token of it (stolen, or forged with the key) tried against the gateway',
    operations,
    attempts,
    checks: [
      {
        name: 'a removed signing key verifies no token at the gateway once the key set is refreshed',
        ok: refusedAfterMs !== null && refusedAfterMs <= REFRESH_BOUND_MS,
        detail:
          refusedAfterMs === null
            ? `still accepted ${(REFRESH_BOUND_MS + 5000) / 1000} s after identity restarted without it`
            : `refused ${(refusedAfterMs / 1000).toFixed(1)} s after identity restarted without it (bound ` +
              `${REFRESH_BOUND_MS / 1000} s); a token forged with it was answered ${beforeRemoval.status} before`,
        discrepancies: refusedAfterMs !== null && refusedAfterMs <= REFRESH_BOUND_MS ? 0 : 1,
      },
      {
        name: 'every token of the removed key refused (401), stolen or forged; the new key works',
        ok: accepted.length === 0 && beforeRemoval.status === 200 && freshAnswer.status === 200,
        detail:
          `${attempts} requests with ${Object.keys(tokens).length} tokens, ${accepted.length} not refused` +
          `${accepted.length > 0 ? ` (${accepted.slice(0, 3).join('; ')})` : ''}; the forged admin token before ` +
          `the removal: ${beforeRemoval.status}; a new login's token: ${freshAnswer.status}`,
        discrepancies:
          accepted.length + (beforeRemoval.status === 200 ? 0 : 1) + (freshAnswer.status === 200 ? 0 : 1),
      },
    ],
  };
}

/** Raw HTTP through the gateway: the attack's requests, as any client could send them. */
async function answer(
  context: AdversarialContext,
  method: string,
  path: string,
  token: string,
  json?: unknown,
): Promise<{ status: number }> {
  return context.gateway.send(bearerCall(method, path, token, json, V1_1)).catch(() => ({ status: 0 }));
}

/** A new token with the claims of `model` (a new `jti`, issued now), signed with `key` under the model's `kid`. */
function forgeLike(model: string, key: KeyObject): string {
  const [header = '', payload = ''] = model.split('.');
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    ...(JSON.parse(Buffer.from(payload, 'base64url').toString()) as object),
    jti: randomUUID(),
    iat: now,
    auth_time: now,
    exp: now + 900,
  };
  const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  // ES256 is ECDSA over SHA-256 with the signature as r‖s (IEEE P1363), not DER.
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
