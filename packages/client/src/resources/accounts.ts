import type { RequestOptions } from '../http-transport.js';
import { pagedList, type PagedList } from '../pagination.js';
import type {
  Account,
  Balance,
  OpenAccountRequest,
  Page,
  PageQuery,
  PastBalance,
  PayoutAccount,
  ReplacePayoutAccountRequest,
  Statement,
  StatementEntry,
  StatementQuery,
} from '../types.js';
import type { ResourceDeps } from './resource-deps.js';

export function accountsResource({ transport }: ResourceDeps) {
  const listPage = async (query: PageQuery = {}, options?: RequestOptions) =>
    transport.body<Page<Account>>('listAccounts', { query, options });
  return {
    /** Opens an account in a supported currency (else 422 INVALID_CURRENCY). */
    async open(account: OpenAccountRequest, options?: RequestOptions): Promise<Account> {
      return transport.body<Account>('openAccount', { body: account, options });
    },
    /** Your accounts, every page. */
    list: (query: PageQuery = {}, options?: RequestOptions): PagedList<Account> =>
      pagedList((window) => listPage({ ...query, ...window }, options), query),
    listPage,
    async get(accountId: string, options?: RequestOptions): Promise<Account> {
      return transport.body<Account>('getAccount', { params: { id: accountId }, options });
    },
  };
}

export function balancesResource({ transport }: ResourceDeps) {
  return {
    /** The booked and the available balance now. */
    async get(accountId: string, options?: RequestOptions): Promise<Balance> {
      return transport.body<Balance>('getBalance', { params: { id: accountId }, options });
    },
    /** The booked balance at a past moment (entries booked before it); a future moment answers as of now. */
    async at(accountId: string, moment: Date | string, options?: RequestOptions): Promise<PastBalance> {
      return transport.body<PastBalance>('getBalance', {
        params: { id: accountId },
        query: { at: moment },
        options,
      });
    },
  };
}

/** `<?from=…&starting_after=…&format=csv>; rel="next"`: the query of the next CSV page, if there is one. */
function nextPageQuery(link: string | null): Record<string, string> | null {
  const target = link && /<([^>]*)>\s*;\s*rel="?next"?/.exec(link)?.[1];
  if (!target) return null;
  return Object.fromEntries(new URLSearchParams(target.slice(target.indexOf('?') + 1)));
}

export function statementsResource({ transport }: ResourceDeps) {
  const get = async (accountId: string, query: StatementQuery = {}, options?: RequestOptions) =>
    transport.body<Statement>('getStatement', { params: { id: accountId }, query, options });
  return {
    /** One page of a statement of `[from, to)`: opening balance, entries with running balance, closing balance. */
    get,
    /** Every entry of the period, oldest first, across pages (the period fixed by the first answer). */
    async *entries(
      accountId: string,
      query: StatementQuery = {},
      options?: RequestOptions,
    ): AsyncGenerator<StatementEntry> {
      let page = await get(accountId, query, options);
      const period = { from: page.from, to: page.to };
      for (;;) {
        yield* page.entries;
        const last = page.entries.at(-1);
        if (!page.has_more || !last) return;
        page = await get(accountId, { ...query, ...period, starting_after: last.id }, options);
      }
    },
    /** The statement as one CSV file (header once, amounts as decimal strings), following every page. */
    async csv(accountId: string, query: StatementQuery = {}, options?: RequestOptions): Promise<string> {
      let csv = '';
      let pageQuery: Record<string, string | number | undefined> = { ...query, format: 'csv' };
      for (;;) {
        const page = await transport.call<string>('getStatement', {
          params: { id: accountId },
          query: pageQuery,
          read: 'text',
          options,
        });
        // Each page repeats the header row; the file keeps the first.
        csv += csv === '' ? page.body : page.body.slice(page.body.indexOf('\n') + 1);
        const next = nextPageQuery(page.headers.get('link'));
        if (!next) return csv;
        pageQuery = next;
      }
    },
  };
}

export function payoutAccountResource({ transport }: ResourceDeps) {
  return {
    /** Makes and links your account at the payment provider (or returns it, with a fresh onboarding link). */
    async link(options?: RequestOptions): Promise<PayoutAccount> {
      return transport.body<PayoutAccount>('linkPayoutAccount', { options });
    },
    /** The linked account, with whether the provider pays out to it (`payouts_enabled`) and what is still due. */
    async get(options?: RequestOptions): Promise<PayoutAccount> {
      return transport.body<PayoutAccount>('getPayoutAccount', { options });
    },
    /**
     * Links a new account made at the provider in place of `replaces` (the one linked now); 409 while a withdrawal
     * is pending. Repeated once replaced, it answers the new account again.
     */
    async replace(request: ReplacePayoutAccountRequest, options?: RequestOptions): Promise<PayoutAccount> {
      return transport.body<PayoutAccount>('replacePayoutAccount', { body: request, options });
    },
  };
}
