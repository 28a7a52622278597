import { sqlSteps, type Migration } from '@payments/service-kit';
import { REQUEST_COLUMNS } from './009_accept_requests_function.js';
import { acceptRequestsTraceContext } from './025_accept_requests_trace_context.js';

/** As 025's columns, and the request's metadata and reference (026_transaction_references). */
const REFERENCED_REQUEST_COLUMNS = `${REQUEST_COLUMNS}, payout_account_required boolean, trace_context jsonb, metadata jsonb, reference text`;

/**
 * ledger_accept_requests as it stands: the balance guard, the withdrawal hold, the payout-account check and the
 * idempotency claim as 025 left them (the rules as 021 set them), and a request's reference claimed after its key:
 * a reference its user already gave is answered `reference_replay` with the first request's fingerprint and answer,
 * holding and writing nothing (its key's claim, if any, is given back); a refused request gives both claims back.
 * The transaction is written with its metadata and reference.
 */
export const acceptRequestsReferences: Migration = {
  name: '027_accept_requests_references',
  up: sqlSteps(
    `
      CREATE OR REPLACE FUNCTION ledger_accept_requests(p_requests jsonb)
      RETURNS TABLE (o_index int, o_outcome text, o_fingerprint text, o_response jsonb, o_created_at timestamptz)
      LANGUAGE plpgsql AS $$
      DECLARE
        r record;
        v_owner uuid;
        v_covered boolean;
        v_refusal text;
        v_accepted int[] := '{}';
      BEGIN
        o_created_at := now();
        FOR r IN SELECT * FROM jsonb_to_recordset(p_requests) AS x(${REFERENCED_REQUEST_COLUMNS}) LOOP
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
          -- The reference's claim, as the key's: the primary key decides between requests accepted at the same time.
          IF r.reference IS NOT NULL THEN
            INSERT INTO transaction_references (user_id, reference, fingerprint, transaction_id, response)
            VALUES (
              r.user_id, r.reference, r.fingerprint, r.id,
              r.snapshot || jsonb_build_object('created_at', o_created_at, 'updated_at', o_created_at)
            )
            ON CONFLICT (user_id, reference) DO NOTHING;
            IF NOT FOUND THEN
              IF r.key IS NOT NULL THEN
                DELETE FROM idempotency_keys k WHERE k.user_id = r.user_id AND k.key = r.key;
              END IF;
              SELECT t.fingerprint, t.response INTO o_fingerprint, o_response
              FROM transaction_references t WHERE t.user_id = r.user_id AND t.reference = r.reference;
              o_outcome := 'reference_replay';
              RETURN NEXT;
              CONTINUE;
            END IF;
          END IF;
          -- "(...) IS TRUE": see 009 (the planner's choice of index without statistics).
          IF r.counterparty_account_id IS NOT NULL THEN
            PERFORM 1 FROM accounts a
            WHERE a.id = r.counterparty_account_id
              AND (a.kind = 'user' AND a.currency = r.counterparty_currency) IS TRUE
            FOR KEY SHARE;
            IF NOT FOUND THEN
              v_refusal := 'destination_not_found';
            END IF;
          END IF;
          IF v_refusal IS NULL AND r.hold > 0
             AND r.payout_account_required IS TRUE
             AND NOT EXISTS (SELECT 1 FROM payout_accounts p WHERE p.user_id = r.user_id) THEN
            -- Refused either way, so nothing is held: for its funds first (SPEC's refusal), else for its destination.
            SELECT a.user_id, a.available_balance >= r.hold INTO v_owner, v_covered
            FROM accounts a WHERE a.id = r.account_id AND (a.kind = 'user') IS TRUE;
            v_refusal := CASE
              WHEN NOT FOUND THEN 'account_not_found'
              WHEN v_owner <> r.user_id THEN 'forbidden'
              WHEN NOT v_covered THEN 'insufficient_funds'
              ELSE 'payout_account_missing'
            END;
          ELSIF v_refusal IS NULL AND r.hold > 0 THEN
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
            IF r.reference IS NOT NULL THEN
              DELETE FROM transaction_references t WHERE t.user_id = r.user_id AND t.reference = r.reference;
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
          exchange_rate, converted_amount, converted_currency, payment_id, metadata, reference
        )
        SELECT x.id, x.account_id, x.user_id, x.type, x.amount, x.currency, x.fee, x.counterparty_account_id,
               x.counterparty_user_id, x.exchange_rate, x.converted_amount, x.converted_currency, x.payment_id,
               COALESCE(x.metadata, '{}'::jsonb), x.reference
        FROM jsonb_to_recordset(p_requests) AS x(${REFERENCED_REQUEST_COLUMNS})
        WHERE x.i = ANY (v_accepted);
        INSERT INTO outbox (event_id, event, trace_context)
        SELECT x.event_id, x.event, x.trace_context
        FROM jsonb_to_recordset(p_requests) AS x(${REFERENCED_REQUEST_COLUMNS})
        WHERE x.i = ANY (v_accepted) AND x.event IS NOT NULL
        ORDER BY x.i;
      END $$`,
  ),
  async down(knex) {
    await acceptRequestsTraceContext.up(knex);
  },
};
