import { checkRateTable, type RateSource } from '../domain/exchange-rates.js';

/** Fetches a rate table (the reference table's JSON shape) from a URL on every call; the cache decides when. */
export function createUrlRateSource(url: string, timeoutMs = 3000): RateSource {
  // Only the origin goes into logs: the path or query may carry an API key.
  const name = new URL(url).origin;
  return {
    name,
    async fetchRates() {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new Error(`${name} answered ${response.status}`);
      const checked = checkRateTable(await response.json());
      if (!checked.ok) throw new Error(`${name} sent an invalid rate table: ${checked.errors.join('; ')}`);
      return checked.table;
    },
  };
}
