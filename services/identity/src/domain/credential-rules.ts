import { compileSchema, NewUserBody } from '@payments/contracts';

const checkNewUser = compileSchema(NewUserBody);

/** The same rules as registration, for users that come from configuration (the bootstrap admin). */
export function credentialProblems(candidate: {
  username: string;
  email: string;
  password: string;
}): string[] {
  const result = checkNewUser(candidate);
  return result.ok ? [] : result.errors;
}
