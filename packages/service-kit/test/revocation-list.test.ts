import { expect } from 'chai';
import { createRevocationList, type AuthClaims } from '../src/auth.js';

const NOW = 1_800_000_000;
const token = (jti: string, issuedAt: number, userId = 'u1'): AuthClaims => ({
  userId,
  role: 'user',
  jti,
  issuedAt,
  expiresAt: issuedAt + 900,
  authTime: issuedAt,
});

describe('revocation list', () => {
  it('refuses a revoked jti and nothing else', () => {
    const list = createRevocationList(() => NOW);
    list.add({ jti: 'a', expires_at: NOW + 900 });
    expect(list.isRevoked(token('a', NOW))).to.equal(true);
    expect(list.isRevoked(token('b', NOW))).to.equal(false);
  });

  it("refuses a user's tokens issued before the revocation, but not later ones or other users'", () => {
    const list = createRevocationList(() => NOW);
    list.add({ user_id: 'u1', issued_before: NOW, expires_at: NOW + 900 });
    expect(list.isRevoked(token('old', NOW - 1))).to.equal(true);
    expect(list.isRevoked(token('new', NOW))).to.equal(false);
    expect(list.isRevoked(token('other', NOW - 1, 'u2'))).to.equal(false);
  });

  it('keeps the one session named as the exception of a user-wide revocation', () => {
    const list = createRevocationList(() => NOW);
    list.add({ user_id: 'u1', issued_before: NOW, except_jti: 'kept', expires_at: NOW + 900 });
    expect(list.isRevoked(token('kept', NOW - 5))).to.equal(false);
    expect(list.isRevoked(token('other', NOW - 5))).to.equal(true);
  });

  it("leaves an API key's tokens to a password change's cutoff, but not to a revocation of all or of the key", () => {
    const list = createRevocationList(() => NOW);
    const keyToken = { ...token('api_key:k1', NOW - 5), apiKey: { id: 'k1', scopes: null } };
    list.add({ user_id: 'u1', issued_before: NOW, except_jti: 'kept', expires_at: NOW + 900 });
    expect(list.isRevoked(keyToken)).to.equal(false);
    list.add({ jti: 'api_key:k1', expires_at: NOW + 3600 });
    expect(list.isRevoked(keyToken)).to.equal(true);
    const other = createRevocationList(() => NOW);
    other.add({ user_id: 'u1', issued_before: NOW, expires_at: NOW + 900 });
    expect(
      other.isRevoked({ ...keyToken, jti: 'api_key:k2', apiKey: { id: 'k2', scopes: ['read'] } }),
    ).to.equal(true);
  });

  it('drops the exception when a later user-wide revocation names none', () => {
    const list = createRevocationList(() => NOW);
    list.add({ user_id: 'u1', issued_before: NOW, except_jti: 'kept', expires_at: NOW + 900 });
    list.add({ user_id: 'u1', issued_before: NOW + 10, expires_at: NOW + 910 });
    expect(list.isRevoked(token('kept', NOW - 5))).to.equal(true);
  });

  // A password change spares the token that made it; a disable, lock or deletion spares none. Whatever the order
  // they arrive in, and even in the same second, the spared token is revoked by the one that spares nothing.
  it('keeps a token spared by a password change revoked by a disable in the same second', () => {
    const list = createRevocationList(() => NOW);
    list.add({ user_id: 'u1', issued_before: NOW + 1, except_jti: 'changer', expires_at: NOW + 900 });
    list.add({ user_id: 'u1', issued_before: NOW + 1, expires_at: NOW + 900 });
    expect(list.isRevoked(token('changer', NOW - 5))).to.equal(true);
  });

  it("keeps a disabled user's token revoked when a password change they started commits after the disable", () => {
    const list = createRevocationList(() => NOW);
    list.add({ user_id: 'u1', issued_before: NOW + 1, expires_at: NOW + 900 });
    list.add({ user_id: 'u1', issued_before: NOW + 2, except_jti: 'changer', expires_at: NOW + 901 });
    expect(list.isRevoked(token('changer', NOW - 5))).to.equal(true);
    // A token issued after the disable is still spared by the change, as one made after it would be.
    expect(list.isRevoked(token('changer', NOW + 1))).to.equal(false);
    expect(list.isRevoked(token('other', NOW + 1))).to.equal(true);
  });

  it('revokes a token spared by one password change when a later change spares another', () => {
    const list = createRevocationList(() => NOW);
    list.add({ user_id: 'u1', issued_before: NOW + 1, except_jti: 'first', expires_at: NOW + 900 });
    list.add({ user_id: 'u1', issued_before: NOW + 3, except_jti: 'second', expires_at: NOW + 902 });
    expect(list.isRevoked(token('first', NOW - 5))).to.equal(true);
    expect(list.isRevoked(token('second', NOW + 2))).to.equal(false);
    expect(list.isRevoked(token('third', NOW + 2))).to.equal(true);
    expect(list.isRevoked(token('third', NOW + 3))).to.equal(false);
  });

  it('forgets cutoffs once every token they covered has expired', () => {
    let now = NOW;
    const list = createRevocationList(() => now);
    list.add({ user_id: 'u1', issued_before: NOW + 1, expires_at: NOW + 900 });
    list.add({ user_id: 'u1', issued_before: NOW + 1, except_jti: 'kept', expires_at: NOW + 900 });
    now = NOW + 1000;
    for (let i = 0; i < 1000; i += 1) list.add({ jti: `filler-${i}`, expires_at: NOW + 2000 });
    expect(list.isRevoked(token('kept', NOW - 5))).to.equal(false);
    expect(list.isRevoked(token('other', NOW - 5))).to.equal(false);
  });
});
