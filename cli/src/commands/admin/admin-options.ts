import { formatAmount } from '../../amounts.js';
import type { CommandContext } from '../../context.js';
import { usageError } from '../../exit-codes.js';

/** The reason goes into the append-only trail of admin actions: it has to say something. */
export const REASON_LENGTH = { min: 3, max: 1000 };

/** `--reason` where the API takes an optional one: kept in the trail of admin actions with what was done. */
export const OPTIONAL_REASON = {
  type: 'string',
  describe: 'Why; kept in the trail of admin actions (payments admin actions)',
} as const;

/** The reason as the API takes it: left out when none was given, refused when it says nothing. */
export function optionalReason(reason: string | undefined): { reason?: string } {
  if (reason === undefined) return {};
  const trimmed = reason.trim();
  if (trimmed.length === 0 || trimmed.length > REASON_LENGTH.max) {
    throw usageError(`--reason must say why in 1 to ${REASON_LENGTH.max} characters.`);
  }
  return { reason: trimmed };
}

/** An amount in a currency, formatted with the currency's decimals. */
export async function money(ctx: CommandContext, value: number | string, currency: string): Promise<string> {
  return formatAmount(value, await ctx.exponents.of(currency));
}
