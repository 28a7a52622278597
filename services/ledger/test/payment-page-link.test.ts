import { expect } from 'chai';
import { ConfigError, loadConfig } from '@payments/service-kit';
import { LedgerConfigSchema, paymentPageBaseOf } from '../src/config.js';
import { renderProviderPayment } from '../src/http/presenters.js';
import type { ProviderPayment } from '../src/use-cases/provider-requests.js';

const baseFrom = (env: Record<string, string>) =>
  paymentPageBaseOf(loadConfig(LedgerConfigSchema, { NODE_ENV: 'test', ...env }));

const TRANSACTION = '7b1c9a52-3f4e-4d6a-9c1b-2e8f0a7d5c31';
const payment = {
  transactionId: TRANSACTION,
  kind: 'payment',
  provider: 'stripe',
  state: 'created',
  reference: 'pi_3Q',
  clientSecret: 'pi_3Q_secret_abc',
} as ProviderPayment;

describe("ledger: a deposit's payment page link (provider_payment.payment_url)", () => {
  it('links the owner of a payable deposit to {PUBLIC_URL}/pay/{transaction_id}, beside its client secret', () => {
    expect(renderProviderPayment(payment, true, 'https://pay.example.com/payments')).to.deep.equal({
      provider: 'stripe',
      reference: 'pi_3Q',
      client_secret: 'pi_3Q_secret_abc',
      payment_url: `https://pay.example.com/payments/pay/${TRANSACTION}`,
    });
  });

  it('shows no link to anyone else, after the deposit ends, without a client secret, or without an address', () => {
    const bare = { provider: 'stripe', reference: 'pi_3Q' };
    expect(renderProviderPayment(payment, false, 'https://pay.example.com')).to.deep.equal(bare);
    expect(
      renderProviderPayment({ ...payment, clientSecret: null }, true, 'https://pay.example.com'),
    ).to.deep.equal(bare);
    expect(renderProviderPayment(payment, true, null)).to.deep.equal({
      ...bare,
      client_secret: 'pi_3Q_secret_abc',
    });
  });

  it('takes PUBLIC_URL without its trailing slash; unset, the development address, and none in production', () => {
    expect(baseFrom({ PUBLIC_URL: 'https://pay.example.com/' })).to.equal('https://pay.example.com');
    expect(baseFrom({})).to.equal('http://localhost:8080');
    expect(baseFrom({ NODE_ENV: 'production' })).to.equal(null);
    expect(baseFrom({ NODE_ENV: 'production', PUBLIC_URL: 'http://127.0.0.1:8080' })).to.equal(
      'http://127.0.0.1:8080',
    );
  });

  it('refuses an address with a query or credentials, and plain http to another machine in production', () => {
    expect(() => baseFrom({ PUBLIC_URL: 'https://pay.example.com/?x=1' })).to.throw(
      ConfigError,
      /PUBLIC_URL/,
    );
    expect(() => baseFrom({ PUBLIC_URL: 'https://user:pw@pay.example.com' })).to.throw(ConfigError);
    expect(() => baseFrom({ NODE_ENV: 'production', PUBLIC_URL: 'http://pay.example.com' })).to.throw(
      ConfigError,
      /https/,
    );
  });
});
