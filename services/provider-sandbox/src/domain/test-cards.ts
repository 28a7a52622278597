/**
 * Card details as a payer types them into a form (Stripe's `payment_method_data[card]`), checked as Stripe checks
 * them, and Stripe's test card numbers (docs.stripe.com/testing) mapped to the sandbox's test payment methods. Only
 * the brand, the last four digits and the expiry leave this module: a full number is never kept.
 */

export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'unknown';

/** What the payer typed: each field as the form sent it. */
export interface CardInput {
  number?: string;
  expMonth?: string;
  expYear?: string;
  cvc?: string;
}

/** A card that passed the checks: what the sandbox keeps of it, and the test payment method it behaves as. */
export interface CheckedCard {
  brand: CardBrand;
  last4: string;
  expMonth: number;
  expYear: number;
  funding: 'credit' | 'debit';
  /** One of the sandbox's test payment methods (`pm_card_visa`…), or null for a number that is no test card. */
  testMethod: string | null;
}

/** Why Stripe refuses the details before any charge is tried: its `card_error` code, message and parameter. */
export interface CardRejection {
  code:
    'invalid_number' | 'incorrect_number' | 'invalid_expiry_month' | 'invalid_expiry_year' | 'invalid_cvc';
  message: string;
  param: 'number' | 'exp_month' | 'exp_year' | 'cvc';
}

interface TestCard {
  testMethod: string;
  brand: CardBrand;
  funding?: 'debit';
}

/** Stripe's test card numbers and the test payment method each stands for. */
const TEST_CARDS: Record<string, TestCard> = {
  '4242424242424242': { testMethod: 'pm_card_visa', brand: 'visa' },
  '4000056655665556': { testMethod: 'pm_card_visa', brand: 'visa', funding: 'debit' },
  '5555555555554444': { testMethod: 'pm_card_mastercard', brand: 'mastercard' },
  '2223003122003222': { testMethod: 'pm_card_mastercard', brand: 'mastercard' },
  '378282246310005': { testMethod: 'pm_card_amex', brand: 'amex' },
  '4000000000000002': { testMethod: 'pm_card_chargeDeclined', brand: 'visa' },
  '4000000000009995': { testMethod: 'pm_card_chargeDeclinedInsufficientFunds', brand: 'visa' },
  '4000000000009987': { testMethod: 'pm_card_chargeDeclinedLostCard', brand: 'visa' },
  '4000000000000069': { testMethod: 'pm_card_chargeDeclinedExpiredCard', brand: 'visa' },
  '4000000000000127': { testMethod: 'pm_card_chargeDeclinedIncorrectCvc', brand: 'visa' },
  '4000000000000119': { testMethod: 'pm_card_chargeDeclinedProcessingError', brand: 'visa' },
  '4000000000007726': { testMethod: 'pm_card_pendingRefund', brand: 'visa' },
  '4000000000005126': { testMethod: 'pm_card_refundFail', brand: 'visa' },
  '4000000000000259': { testMethod: 'pm_card_createDispute', brand: 'visa' },
};

/** The test payment methods some test card stands for (each must be one the sandbox knows). */
export const TEST_CARD_METHODS: readonly string[] = [
  ...new Set(Object.values(TEST_CARDS).map((c) => c.testMethod)),
];

const reject = (code: CardRejection['code'], param: CardRejection['param'], message: string) => ({
  rejected: { code, param, message },
});

/** The Luhn checksum every real card number satisfies. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The brand a number's first digits name (IIN ranges). */
export function brandOf(digits: string): CardBrand {
  if (digits.startsWith('4')) return 'visa';
  const two = Number(digits.slice(0, 2));
  const four = Number(digits.slice(0, 4));
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard';
  if (two === 34 || two === 37) return 'amex';
  if (digits.startsWith('6011') || two === 65) return 'discover';
  return 'unknown';
}

/**
 * Checks card details as Stripe does before charging: the number's form and checksum, an expiry that has not
 * passed (a two-digit year is this century's), a CVC of three digits (four for American Express) when given.
 */
export function checkCard(
  input: CardInput,
  today: Date = new Date(),
): { card: CheckedCard } | { rejected: CardRejection } {
  const digits = (input.number ?? '').replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits)) {
    return reject('invalid_number', 'number', 'The card number is not a valid credit card number.');
  }
  if (!passesLuhn(digits)) return reject('incorrect_number', 'number', 'Your card number is incorrect.');
  const month = /^\d{1,2}$/.test(input.expMonth ?? '') ? Number(input.expMonth) : NaN;
  if (!(month >= 1 && month <= 12)) {
    return reject('invalid_expiry_month', 'exp_month', "Your card's expiration month is invalid.");
  }
  const rawYear = input.expYear ?? '';
  const year = /^\d{2}$/.test(rawYear)
    ? 2000 + Number(rawYear)
    : /^\d{4}$/.test(rawYear)
      ? Number(rawYear)
      : NaN;
  const thisYear = today.getUTCFullYear();
  if (!(year >= thisYear && year <= thisYear + 50)) {
    return reject('invalid_expiry_year', 'exp_year', "Your card's expiration year is invalid.");
  }
  if (year === thisYear && month < today.getUTCMonth() + 1) {
    return reject('invalid_expiry_month', 'exp_month', "Your card's expiration month is invalid.");
  }
  const known = TEST_CARDS[digits];
  const brand = known?.brand ?? brandOf(digits);
  if (input.cvc !== undefined && !(brand === 'amex' ? /^\d{4}$/ : /^\d{3}$/).test(input.cvc)) {
    return reject('invalid_cvc', 'cvc', "Your card's security code is invalid.");
  }
  return {
    card: {
      brand,
      last4: digits.slice(-4),
      expMonth: month,
      expYear: year,
      funding: known?.funding ?? 'credit',
      testMethod: known?.testMethod ?? null,
    },
  };
}
