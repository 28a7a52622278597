/** A timestamp as the operator reads it: their locale, to the second. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const time = new Date(iso);
  return Number.isNaN(time.getTime()) ? iso : time.toLocaleString(undefined, { hour12: false });
}

/** An amount the API answered (a JSON number in the currency's units) with its currency. */
export function formatAmount(amount: number | null | undefined, currency: string): string {
  if (amount === null || amount === undefined) return '—';
  return `${amount.toLocaleString(undefined, { maximumFractionDigits: 8 })} ${currency}`;
}

/** The first characters of an id, for a table; the whole id stays in the title and in the detail. */
export const shortId = (id: string) => id.slice(0, 8);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (text: string) => UUID.test(text);
