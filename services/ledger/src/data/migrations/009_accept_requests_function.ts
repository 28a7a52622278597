import { sqlSteps, type Migration } from '@payments/service-kit';

/** The money requests one acceptance statement takes, as ledger_accept_requests reads them from JSON. */
export const REQUEST_COLUMNS = `
  i int, id uuid, account_id uuid, user_id uuid, type text, amount bigint, currency text, fee bigint, hold bigint,
  counterparty_account_id uuid, counterparty_user_id uuid, counterparty_currency text, exchange_rate numeric,
  converted_amount bigint, converted_currency text, payment_id text, event_id uuid, event jsonb, key text,
  fingerprint text, snapshot jsonb`;

/**
 * ledger_accept_requests, as first made (021_accept_requests_payout_account replaces it): where a money request's
 * hold is taken against the available balance or the request refused `insufficient_funds`.
 *
 * Money requests accepted together (group commit) in one statement: one round trip, one database transaction.
 * Each request, in the order given (the caller sorts them by account, the order settlements lock accounts in),
 * takes the steps the former one did: the idempotency key claimed (a concurrent claimant waits for the first to
 * commit, then replays its answer), the destination share-locked, the hold taken (or, for a deposit, the account
 * share-locked). A request refused leaves nothing behind (its claim is deleted again) and does not affect the
 * others. Then every accepted transaction and requested event is written, one statement each. The caller never
 * puts two requests with the same user and key in one call.
 */
export const acceptRequestsFunction: Migration = {
  name: '009_accept_requests_function',
  up: sqlSteps(
    `
      CREATE FUNCTION ledger_accept_requests(p_requests jsonb)
      RETURNS TABLE (o_index int, o_outcome text, o_fingerprint text, o_response jsonb, o_created_at timestamptz)
      LANGUAGE plpgsql AS $$
      DECLARE
        r record;
        v_owner uuid;
        v_refusal text;
        v_accepted int[] := '{}';
      BEGIN
        -- The transactions' timestamps: now() is fixed for the whole database transaction.
        o_created_at := now();
        FOR r IN SELECT * FROM jsonb_to_recordset(p_requests) AS x(${REQUEST_COLUMNS}) LOOP
          o_index := r.i;
          o_fingerprint := NULL;
          o_response := NULL;
          v_refusal := NULL;
          IF r.key IS NOT NULL THEN
            INSERT INTO idempotency_keys (user_id, key, fingerprint, transaction_id, response)
            VALUES (
              r.user_id, r.key, r.fingerprint, r.id,
              r.snapshot || jsonb_build_object('created_at', o_created_at, 'updated_at', o_created_at)
            )
            ON CONFLICT (user_id, key) DO NOTHING;
            IF NOT FOUND THEN
              SELECT k.fingerprint, k.response INTO o_fingerprint, o_response
              FROM idempotency_keys k WHERE k.user_id = r.user_id AND k.key = r.key;
              o_outcome := 'replay';
              RETURN NEXT;
              CONTINUE;
            END IF;
          END IF;
          -- Account look-ups by id say "(...) IS TRUE" for the other conditions: without statistics (autovacuum
          -- off) the planner otherwise picks accounts_user_created (user_id, created_at, id) WHERE kind = 'user',
          -- and walks every account of the user instead of one primary-key entry.
          IF r.counterparty_account_id IS NOT NULL THEN
            PERFORM 1 FROM accounts a
            WHERE a.id = r.counterparty_account_id
              AND (a.kind = 'user' AND a.currency = r.counterparty_currency) IS TRUE
            FOR KEY SHARE;
            IF NOT FOUND THEN
              v_refusal := 'destination_not_found';
            END IF;
          END IF;
          IF v_refusal IS NULL AND r.hold > 0 THEN
            UPDATE accounts a SET available_balance = a.available_balance - r.hold, updated_at = now()
            WHERE a.id = r.account_id
              AND (a.kind = 'user' AND a.user_id = r.user_id AND a.available_balance >= r.hold) IS TRUE;
            IF NOT FOUND THEN
              SELECT a.user_id INTO v_owner FROM accounts a WHERE a.id = r.account_id AND (a.kind = 'user') IS TRUE;
              v_refusal := CASE
                WHEN NOT FOUND THEN 'account_not_found'
                WHEN v_owner <> r.user_id THEN 'forbidden'
                ELSE 'insufficient_funds'
              END;
            END IF;
          ELSIF v_refusal IS NULL THEN
            -- A deposit holds nothing: only a share lock keeps its account from being deleted until commit.
            PERFORM 1 FROM accounts a
            WHERE a.id = r.account_id AND (a.kind = 'user' AND a.user_id = r.user_id) IS TRUE
            FOR KEY SHARE;
            IF NOT FOUND THEN
              v_refusal := 'account_not_found';
            END IF;
          END IF;
          IF v_refusal IS NOT NULL THEN
            IF r.key IS NOT NULL THEN
              DELETE FROM idempotency_keys k WHERE k.user_id = r.user_id AND k.key = r.key;
            END IF;
            o_outcome := v_refusal;
          ELSE
            v_accepted := v_accepted || r.i;
            o_outcome := 'accepted';
          END IF;
          RETURN NEXT;
        END LOOP;
        IF cardinality(v_accepted) = 0 THEN
          RETURN;
        END IF;
        INSERT INTO transactions (
          id, account_id, user_id, type, amount, currency, fee, counterparty_account_id, counterparty_user_id,
          exchange_rate, converted_amount, converted_currency, payment_id
        )
        SELECT x.id, x.account_id, x.user_id, x.type, x.amount, x.currency, x.fee, x.counterparty_account_id,
               x.counterparty_user_id, x.exchange_rate, x.converted_amount, x.converted_currency, x.payment_id
        FROM jsonb_to_recordset(p_requests) AS x(${REQUEST_COLUMNS})
        WHERE x.i = ANY (v_accepted);
        INSERT INTO outbox (event_id, event)
        SELECT x.event_id, x.event
        FROM jsonb_to_recordset(p_requests) AS x(${REQUEST_COLUMNS})
        WHERE x.i = ANY (v_accepted) AND x.event IS NOT NULL
        ORDER BY x.i;
      END $$`,
  ),
  async down(knex) {
    await knex.raw('DROP FUNCTION ledger_accept_requests');
  },
};
