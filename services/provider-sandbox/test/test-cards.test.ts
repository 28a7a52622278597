import { expect } from 'chai';
import { brandOf, checkCard, passesLuhn, TEST_CARD_METHODS } from '../src/domain/test-cards.js';
import { isTestPaymentMethod } from '../src/stripe/payment-intents.js';

const today = new Date('2026-11-29T00:00:00Z');
const valid = { expMonth: '12', expYear: '2030', cvc: '123' };
const check = (number: string, rest: Partial<typeof valid> = {}) =>
  checkCard({ number, ...valid, ...rest }, today);

describe("provider-sandbox: card details checked as Stripe's API checks them", () => {
  it("maps each of Stripe's test card numbers to a test payment method the sandbox knows", () => {
    expect(TEST_CARD_METHODS.filter((method) => !isTestPaymentMethod(method))).to.deep.equal([]);
    const methods = Object.fromEntries(
      [
        '4242424242424242',
        '4000000000000002',
        '4000000000009995',
        '4000000000000069',
        '4000000000000127',
        '5555555555554444',
        '4000000000007726',
        '4000000000005126',
        '4000000000000259',
      ].map((number) => {
        const result = check(number);
        return [number, 'card' in result ? result.card.testMethod : result.rejected.code];
      }),
    );
    expect(methods).to.deep.equal({
      '4242424242424242': 'pm_card_visa',
      '4000000000000002': 'pm_card_chargeDeclined',
      '4000000000009995': 'pm_card_chargeDeclinedInsufficientFunds',
      '4000000000000069': 'pm_card_chargeDeclinedExpiredCard',
      '4000000000000127': 'pm_card_chargeDeclinedIncorrectCvc',
      '5555555555554444': 'pm_card_mastercard',
      '4000000000007726': 'pm_card_pendingRefund',
      '4000000000005126': 'pm_card_refundFail',
      '4000000000000259': 'pm_card_createDispute',
    });
  });

  it('keeps the brand, the last four digits and the expiry, never the number', () => {
    const result = check('4242 4242 4242 4242', { expYear: '31' });
    expect(result).to.deep.equal({
      card: {
        brand: 'visa',
        last4: '4242',
        expMonth: 12,
        expYear: 2031,
        funding: 'credit',
        testMethod: 'pm_card_visa',
      },
    });
    expect(JSON.stringify(result)).not.to.include('424242424242');
  });

  it('refuses a number of the wrong form as invalid_number, and one failing the Luhn check as incorrect_number', () => {
    expect(check('4242abcd42424242')).to.have.nested.property('rejected.code', 'invalid_number');
    expect(check('42424242')).to.have.nested.property('rejected.code', 'invalid_number');
    expect(check('4242424242424241')).to.deep.equal({
      rejected: { code: 'incorrect_number', param: 'number', message: 'Your card number is incorrect.' },
    });
  });

  it('refuses a past or impossible expiry by its month or its year', () => {
    expect(check('4242424242424242', { expYear: '2025' })).to.have.nested.property(
      'rejected.code',
      'invalid_expiry_year',
    );
    expect(check('4242424242424242', { expYear: '2099' })).to.have.nested.property(
      'rejected.code',
      'invalid_expiry_year',
    );
    expect(check('4242424242424242', { expMonth: '13' })).to.have.nested.property(
      'rejected.code',
      'invalid_expiry_month',
    );
    expect(check('4242424242424242', { expMonth: '10', expYear: '2026' })).to.have.nested.property(
      'rejected.code',
      'invalid_expiry_month',
    );
    expect(check('4242424242424242', { expMonth: '11', expYear: '2026' })).to.have.property('card');
  });

  it('wants three CVC digits, four for American Express', () => {
    expect(check('4242424242424242', { cvc: '12' })).to.have.nested.property('rejected.code', 'invalid_cvc');
    expect(check('4242424242424242', { cvc: '1234' })).to.have.nested.property(
      'rejected.code',
      'invalid_cvc',
    );
    expect(check('378282246310005', { cvc: '123' })).to.have.nested.property('rejected.code', 'invalid_cvc');
    expect(check('378282246310005', { cvc: '1234' })).to.have.nested.property('card.brand', 'amex');
  });

  it('takes a well-formed number that is no test card, to be declined as a real card in test mode', () => {
    expect(passesLuhn('4111111111111111')).to.equal(true);
    expect(check('4111111111111111')).to.have.nested.property('card.testMethod', null);
    expect(brandOf('2223003122003222')).to.equal('mastercard');
  });
});
