import type { MinorUnits } from '@payments/contracts';

/** One user's exposure in one currency, over the accounts that hold their card deposits of the window. */
export interface UserExposure {
  userId: string;
  currency: string;
  /** What a chargeback of every one of those deposits would cost the platform. */
  exposure: MinorUnits;
  /** The card deposits of the window, less what was already refunded or disputed of them (D). */
  deposits: MinorUnits;
  /** What those accounts hold now. */
  balance: MinorUnits;
}

export interface CurrencyExposure {
  currency: string;
  exposure: MinorUnits;
  exposedUsers: number;
  deposits: MinorUnits;
}

export interface ExposureRequest {
  since: Date;
  limit: number;
  currency?: string;
}

export interface ExposureStore {
  /** Users with an exposure, largest first (then by user and currency), up to `limit` + 1; and the totals. */
  exposure(request: ExposureRequest): Promise<{ users: UserExposure[]; totals: CurrencyExposure[] }>;
}

export interface ChargebackExposureReport {
  since: Date;
  windowDays: number;
  users: UserExposure[];
  hasMore: boolean;
  totals: CurrencyExposure[];
}

export interface ChargebackExposure {
  read(request: { limit: number; currency?: string }): Promise<ChargebackExposureReport>;
}

/**
 * Card deposits still inside the dispute window whose money has already left (ADR 0127): per account, the card
 * deposits completed within the window and not reversed sum to D, and the exposure is D − max(balance, 0), between
 * 0 and D: what the platform would lose were every one of them charged back.
 */
export function createChargebackExposure(options: {
  store: ExposureStore;
  windowDays: number;
  now?: () => Date;
}): ChargebackExposure {
  const now = options.now ?? (() => new Date());
  return {
    async read({ limit, currency }) {
      const since = new Date(now().getTime() - options.windowDays * 86_400_000);
      const { users, totals } = await options.store.exposure({ since, limit, currency });
      return {
        since,
        windowDays: options.windowDays,
        users: users.slice(0, limit),
        hasMore: users.length > limit,
        totals,
      };
    },
  };
}
