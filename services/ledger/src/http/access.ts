import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { accessDenied, AppError, notFound, type Role } from '@payments/service-kit';
import type { CurrencyDirectory } from '../data/currency-directory.js';
import type { LedgerStore } from '../data/ledger-store.js';
import { isUuid } from '../domain/identifiers.js';
import type { CurrencyUnit } from '../domain/money.js';
import type { Account } from '../domain/transaction.js';
import type { Exponents } from './presenters.js';

export interface Viewer {
  userId: string;
  role: Role;
}

export function viewerOf(req: Request): Viewer {
  if (!req.auth) throw new AppError('AUTH_REQUIRED', 'A valid bearer token is required');
  return { userId: req.auth.userId, role: req.auth.role };
}

/** A path id that is not a UUID names nothing: 404, like a missing resource. */
export function pathId(req: Request, what: string, name = 'id'): string {
  const id = req.params[name];
  if (!isUuid(id)) throw notFound(what);
  return id.toLowerCase();
}

/** An account the viewer may read: their own, or any for an admin. */
export async function readableAccount(
  store: LedgerStore,
  accountId: string,
  viewer: Viewer,
): Promise<Account> {
  const account = await store.findUserAccount(accountId);
  if (!account) throw notFound('Account');
  if (account.userId !== viewer.userId && viewer.role !== 'admin')
    throw accessDenied('This account belongs to another user');
  return account;
}

export function correlationIdOf(req: Request): string {
  return req.get('x-request-id') ?? randomUUID();
}

/** The currency of an existing account or transaction; the catalogue not knowing it is our fault, not the client's. */
export async function currencyUnitOf(currencies: CurrencyDirectory, code: string): Promise<CurrencyUnit> {
  const currency = await currencies.find(code);
  if (!currency) throw new Error(`the currency service does not know ${code}`);
  return currency;
}

export async function exponentsFor(
  currencies: CurrencyDirectory,
  codes: Iterable<string>,
): Promise<Exponents> {
  const unique = [...new Set(codes)];
  const units = await Promise.all(unique.map((code) => currencyUnitOf(currencies, code)));
  return new Map(units.map((unit) => [unit.code, unit.exponent]));
}
