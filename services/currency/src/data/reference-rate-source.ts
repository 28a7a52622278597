import referenceRates from './reference-rates.json' with { type: 'json' };
import { checkRateTable, type RateSource } from '../domain/exchange-rates.js';

/** Serves the committed reference snapshot; an invalid table stops start-up rather than a later request. */
export function createReferenceRateSource(table: unknown = referenceRates): RateSource {
  const checked = checkRateTable(table);
  if (!checked.ok) throw new Error(`The reference rate table is invalid: ${checked.errors.join('; ')}`);
  const rates = checked.table;
  return { name: 'reference table', fetchRates: async () => rates };
}
