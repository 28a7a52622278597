/** Access tokens are ES256 JWTs; verifiers pin this algorithm. */
export const TOKEN_ALGORITHM = 'ES256';

export type Role = 'user' | 'admin';
