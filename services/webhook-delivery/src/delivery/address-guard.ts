import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress, parseEndpointUrl } from '../domain/endpoint-url.js';

export class UnsafeAddressError extends Error {
  override name = 'UnsafeAddressError';
}

export interface AddressGuard {
  /** Refuses a URL whose scheme is not http(s), or whose host resolves to any non-public address. */
  checkUrl(url: string): Promise<{ ok: true } | { ok: false; message: string }>;
  /**
   * A `lookup` for http.request that resolves the name again at connection time and refuses it when any
   * address is not public, so a name that re-resolves to an internal address later (DNS rebinding) is caught.
   */
  lookup: LookupFunction;
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** `resolve` replaces the system resolver (tests stand in a DNS that changes its answer). */
export function createAddressGuard(options: { allowPrivate: boolean; resolve?: Resolver }): AddressGuard {
  const resolve = options.resolve ?? resolveAll;
  const refused = (addresses: readonly string[]) =>
    options.allowPrivate ? [] : addresses.filter((address) => !isPublicAddress(address));

  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const bad = refused(addresses.map((a) => a.address));
        if (addresses.length === 0 || bad.length > 0) {
          const error = new UnsafeAddressError(`${hostname} resolves to a non-public address`);
          callback(Object.assign(error, { code: 'EUNSAFEADDRESS' }), '', 0);
          return;
        }
        if ((lookupOptions as { all?: boolean }).all) {
          (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses);
        } else {
          const first = addresses[0] as LookupAddress;
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };

  return {
    lookup,
    async checkUrl(value) {
      const parsed = parseEndpointUrl(value);
      if (!parsed.ok) return parsed;
      if (options.allowPrivate) return { ok: true };
      let addresses: string[];
      if (parsed.literalAddress) addresses = [parsed.hostname];
      else {
        try {
          addresses = (await resolve(parsed.hostname)).map((a) => a.address);
        } catch {
          return { ok: false, message: 'names a host that does not resolve' };
        }
      }
      if (addresses.length === 0 || refused(addresses).length > 0) {
        return {
          ok: false,
          message: 'must not point to a loopback, private, link-local or reserved address',
        };
      }
      return { ok: true };
    },
  };
}

/** Whether a literal IP host may be connected to (no lookup happens for those, so the guard checks them here). */
export function literalHostAllowed(hostname: string, allowPrivate: boolean): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return isIP(bare) === 0 || allowPrivate || isPublicAddress(bare);
}
