import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { AnyEvent } from '@payments/contracts';
import { createLogger } from '@payments/service-kit';
import { createSettlementRepository } from '../src/data/settlement-repository.js';
import { createTransferSettler } from '../src/use-cases/settlement.js';
import { useLedgerHarness, type LedgerHarness, type TestUser } from './support/ledger-harness.js';

/** A transfer as the acceptance writes it, `ageSeconds` ago, with its hold; no process has it to settle. */
/** Alice funds an account with 10.00 and sends 6.00 to Bob's, accepted 15 s ago and left pending. */
async function tenSentSixLeftPending(ledger: LedgerHarness, alice: TestUser, bob: TestUser) {
  const source = await ledger.openAccount(alice);
  const destination = await ledger.openAccount(bob);
  await ledger.fund(alice, source.id, 10);
  const id = await leavePendingTransfer(
    ledger,
    { user: alice, accountId: source.id },
    { user: bob, accountId: destination.id },
    600,
    15,
  );
  return { source, destination, id };
}

async function leavePendingTransfer(
  ledger: LedgerHarness,
  from: { user: TestUser; accountId: string },
  to: { user: TestUser; accountId: string },
  amountMinor: number,
  ageSeconds: number,
): Promise<string> {
  const id = randomUUID();
  await ledger.db.transaction(async (trx) => {
    const acceptedAt = trx.raw(`now() - make_interval(secs => ?)`, [ageSeconds]);
    await trx('transactions').insert({
      id,
      account_id: from.accountId,
      user_id: from.user.id,
      type: 'transfer',
      amount: amountMinor,
      currency: 'USD',
      counterparty_account_id: to.accountId,
      counterparty_user_id: to.user.id,
      created_at: acceptedAt,
      updated_at: acceptedAt,
    });
    await trx('accounts').where({ id: from.accountId }).decrement('available_balance', amountMinor);
  });
  return id;
}

/**
 * The ledger settles the transfers it accepts in the accepting process, without the broker. One that process
 * never settled (it crashed between acceptance and settlement) is settled by the maintenance sweep, once.
 */
describe('ledger transfer settlement without the broker', () => {
  let alice: TestUser;
  let bob: TestUser;
  const published: AnyEvent[] = [];

  const ledger = useLedgerHarness(
    {
      env: { HOLD_SWEEP_INTERVAL_MS: '100' },
      wrapBus: (bus) => ({
        ...bus,
        async publish(event: AnyEvent) {
          await bus.publish(event);
          published.push(event);
        },
      }),
    },
    { booksBalance: true },
  );
  beforeEach(() => {
    alice = ledger.newUser();
    bob = ledger.newUser();
  });

  it('settles an accepted transfer in the accepting process: nothing goes through the broker but its outcome', async () => {
    const source = await ledger.openAccount(alice);
    const destination = await ledger.openAccount(bob);
    await ledger.fund(alice, source.id, 10);
    const response = await ledger.transfer(alice, source.id, destination.id, 4);
    expect(response.status).to.equal(202);
    expect(response.body.status).to.equal('pending');
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect((await ledger.balanceOf(bob, destination.id)).balance).to.equal(4);
    const about = published.filter(
      (event) => (event.data as { transaction_id?: string }).transaction_id === response.body.id,
    );
    expect(about.map((event) => event.type)).to.deep.equal(['TransactionCompleted']);
  });

  it('settles, once, a transfer its ledger accepted but never settled (a crash in between)', async () => {
    const { source, destination, id } = await tenSentSixLeftPending(ledger, alice, bob);
    await ledger.waitForStatus(alice, id, 'completed', 5000);
    expect(await ledger.balanceOf(alice, source.id)).to.include({ balance: 4, available_balance: 4 });
    expect(await ledger.balanceOf(bob, destination.id)).to.include({ balance: 6, available_balance: 6 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const completions = published.filter(
      (event) =>
        event.type === 'TransactionCompleted' &&
        (event.data as { transaction_id: string }).transaction_id === id,
    );
    expect(completions).to.have.length(1);
  });
});

describe('ledger transfer recovery at start', () => {
  // The harness's own ledger settles nothing here: its hold expiry (5 s) is shorter than the recovery age, so
  // its sweep's window is empty, and its hold expiry pass comes only after 10 minutes.
  const ledger = useLedgerHarness({
    env: { HOLD_EXPIRY_SECONDS: '5', HOLD_SWEEP_INTERVAL_MS: '600000' },
  });

  it('settles, as soon as a ledger starts, a transfer a crashed one left pending (not after its first interval)', async () => {
    const alice = ledger.newUser();
    const bob = ledger.newUser();
    const { source, destination, id } = await tenSentSixLeftPending(ledger, alice, bob);
    // A ledger restarted more often than its sweep interval (here 10 minutes) must still settle it.
    const restarted = createTransferSettler({
      store: createSettlementRepository(ledger.db),
      outbox: { wake: () => undefined },
      logger: createLogger('transfer-recovery-test', 'silent'),
      holdExpiryMs: 86_400_000,
      recoveryIntervalMs: 600_000,
    });
    try {
      await ledger.waitForStatus(alice, id, 'completed', 3000);
    } finally {
      await restarted.stop();
    }
    expect(await ledger.balanceOf(alice, source.id)).to.include({ balance: 4, available_balance: 4 });
    expect(await ledger.balanceOf(bob, destination.id)).to.include({ balance: 6, available_balance: 6 });
    expect(await ledger.audit()).to.include({ ok: true });
  });
});
