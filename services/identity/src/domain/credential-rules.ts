import { Type } from '@sinclair/typebox';
import { compileSchema } from '@payments/contracts';

export const USERNAME_PATTERN = '^[A-Za-z0-9_.-]+$';

export const Username = Type.String({
  minLength: 3,
  maxLength: 32,
  pattern: USERNAME_PATTERN,
  description: '3–32 letters, digits, "_", "." or "-"',
});

export const Email = Type.String({ format: 'email', maxLength: 254 });

/** OWASP: at least 8 characters, and a maximum so a huge password cannot tie up the hasher. */
export const Password = Type.String({ minLength: 8, maxLength: 128 });

export const NewUserSchema = Type.Object(
  { username: Username, email: Email, password: Password },
  { additionalProperties: false },
);

const checkNewUser = compileSchema(NewUserSchema);

/** The same rules as registration, for users that come from configuration (the bootstrap admin). */
export function credentialProblems(candidate: {
  username: string;
  email: string;
  password: string;
}): string[] {
  const result = checkNewUser(candidate);
  return result.ok ? [] : result.errors;
}
