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

  it('drops the exception when a later user-wide revocation names none', () => {
    const list = createRevocationList(() => NOW);
    list.add({ user_id: 'u1', issued_before: NOW, except_jti: 'kept', expires_at: NOW + 900 });
    list.add({ user_id: 'u1', issued_before: NOW + 10, expires_at: NOW + 910 });
    expect(list.isRevoked(token('kept', NOW - 5))).to.equal(true);
  });
});
