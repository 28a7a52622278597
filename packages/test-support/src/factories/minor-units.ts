import { toMinorUnits, type MinorUnits } from '@payments/contracts';

/** An amount in minor units (cents), exactly: `minor(1050)` is 10.50 USD. */
export const minor = (value: number | bigint): MinorUnits => toMinorUnits(BigInt(value));
