/** The sandbox's own test rule, besides Stripe's test values: an amount whose minor units end in 13 fails. */
export function failsBySandboxRule(amount: number): boolean {
  return amount % 100 === 13;
}
