import { Type, type Static } from '@sinclair/typebox';
import {
  ConfigError,
  DatabaseServiceConfig,
  IdentityTokensConfig,
  InboxConfig,
  splitList,
  Url,
} from '@payments/service-kit';
import {
  catalogueEntries,
  createCatalogue,
  findCurrencySettingsProblems,
  type Catalogue,
} from './domain/catalogue.js';

export const CurrencyConfigSchema = Type.Object({
  ...DatabaseServiceConfig(3003, 'payments_currency', 'currency'),
  ...InboxConfig,
  ...IdentityTokensConfig(
    "Where identity answers (the revocations in force, for the admins' dead-letter routes)",
  ),
  SUPPORTED_CURRENCIES: Type.String({
    default: 'USD,EUR,GBP,JPY,CHF,CAD,AUD,KWD',
    description:
      'Comma-separated ISO 4217 codes accounts may be opened in; JPY and KWD exercise exponents 0 and 3',
  }),
  DEFAULT_CURRENCY: Type.String({
    default: 'USD',
    description:
      'The currency `/api/currencies/default` names, and the base of `/api/currencies/rates` when none is asked for',
  }),
  RATES_SOURCE_URL: Type.Optional(
    Url({ description: 'Where exchange rates come from; unset serves the committed reference table' }),
  ),
  RATES_CACHE_TTL_SECONDS: Type.Integer({
    minimum: 0,
    default: 60,
    description: 'Rates from RATES_SOURCE_URL are kept this long',
  }),
  RATES_STALE_GRACE_SECONDS: Type.Integer({
    minimum: 0,
    default: 300,
    description: 'How long past their TTL rates still serve while RATES_SOURCE_URL fails',
  }),
});

export type CurrencyConfig = Static<typeof CurrencyConfigSchema>;

const SETTING_VARIABLES = { supported: 'SUPPORTED_CURRENCIES', default: 'DEFAULT_CURRENCY' } as const;

/** The catalogue with the configured supported set and default; a bad code is a ConfigError naming its variable. */
export function createConfiguredCatalogue(
  config: Pick<CurrencyConfig, 'SUPPORTED_CURRENCIES' | 'DEFAULT_CURRENCY'>,
): Catalogue {
  const supported = splitList(config.SUPPORTED_CURRENCIES);
  const problems = findCurrencySettingsProblems(supported, config.DEFAULT_CURRENCY);
  if (problems.length > 0) {
    const messages = problems.map(({ setting, message }) => `${SETTING_VARIABLES[setting]}: ${message}`);
    throw new ConfigError(`Invalid configuration: ${messages.join('; ')}`);
  }
  return createCatalogue(catalogueEntries, supported, config.DEFAULT_CURRENCY);
}
