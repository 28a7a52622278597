import { createServer, type Server } from 'node:http';

interface StubCurrency {
  code: string;
  name: string;
  numeric_code: string;
  minor_units: number;
  symbol: string;
  regions: string[];
  countries: string[];
  supported: boolean;
}

const currency = (
  code: string,
  name: string,
  numeric: string,
  minorUnits: number,
  supported: boolean,
): StubCurrency => ({
  code,
  name,
  numeric_code: numeric,
  minor_units: minorUnits,
  symbol: code,
  regions: [],
  countries: [],
  supported,
});

const CURRENCIES = [
  currency('USD', 'US Dollar', '840', 2, true),
  currency('EUR', 'Euro', '978', 2, true),
  currency('JPY', 'Yen', '392', 0, true),
  currency('KWD', 'Kuwaiti Dinar', '414', 3, true),
  currency('GBP', 'Pound Sterling', '826', 2, false),
];

/** Units of the second currency per unit of the first; pairs not listed have no rate (404). */
const RATES: Record<string, string> = {
  'USD:EUR': '0.9',
  'EUR:USD': '1.1',
  'USD:JPY': '150.25',
  'JPY:USD': '0.0066',
  'USD:KWD': '0.307',
};

export interface CurrencyStub {
  url: string;
  /** How many requests reached the stub: the ledger's cache keeps this low. */
  requests(): number;
  close(): Promise<void>;
}

/**
 * Stands in for the currency service in the ledger's component tests, answering the endpoints the ledger uses
 * (currency lookup, supported list, exchange rate). The system end-to-end tests run against the real service.
 */
export async function startCurrencyStub(): Promise<CurrencyStub> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests += 1;
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const path = new URL(req.url ?? '/', 'http://stub').pathname;
    if (path === '/api/currencies/supported')
      return send(200, { data: CURRENCIES.filter((c) => c.supported) });
    const rate = /^\/api\/currencies\/([A-Z]{3})\/rate\/([A-Z]{3})$/.exec(path);
    if (rate) {
      const [, from, to] = rate as unknown as [string, string, string];
      const value = RATES[`${from}:${to}`];
      if (!value)
        return send(404, { code: 'RESOURCE_NOT_FOUND', detail: `No exchange rate from ${from} to ${to}` });
      return send(200, { from, to, rate: value, as_of: '2025-01-01T00:00:00.000Z', cached: false });
    }
    const one = /^\/api\/currencies\/([A-Za-z]+)$/.exec(path);
    const found = one && CURRENCIES.find((c) => c.code === one[1]);
    if (found) return send(200, found);
    return send(404, { code: 'RESOURCE_NOT_FOUND', detail: 'Currency not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
