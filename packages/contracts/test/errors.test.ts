import { expect } from 'chai';
import { buildProblem, ERRORS, isErrorCode, problemType } from '../src/errors.js';

describe('error codes and problems', () => {
  it('maps every SPEC error code to its status', () => {
    const spec = {
      AUTH_REQUIRED: 401,
      INVALID_CREDENTIALS: 401,
      ACCESS_DENIED: 403,
      RESOURCE_NOT_FOUND: 404,
      DUPLICATE_ENTRY: 409,
      INSUFFICIENT_FUNDS: 422,
      INVALID_CURRENCY: 422,
      VALIDATION_ERROR: 400,
      RATE_LIMIT_EXCEEDED: 429,
      INTERNAL_ERROR: 500,
    };
    for (const [code, status] of Object.entries(spec)) {
      expect(isErrorCode(code), code).to.equal(true);
      expect(ERRORS[code as keyof typeof ERRORS].status, code).to.equal(status);
    }
  });

  it('builds an RFC 9457 body with the code, the path and field errors', () => {
    const problem = buildProblem('VALIDATION_ERROR', 'amount is required', '/account/1/deposit', [
      { field: 'amount', message: 'is required' },
    ]);
    expect(problem).to.deep.equal({
      type: '/problems/validation-error',
      title: 'Request validation failed',
      status: 400,
      detail: 'amount is required',
      instance: '/account/1/deposit',
      code: 'VALIDATION_ERROR',
      errors: [{ field: 'amount', message: 'is required' }],
    });
  });

  it('omits errors when there are none', () => {
    expect(buildProblem('INSUFFICIENT_FUNDS', 'x', '/p')).to.not.have.property('errors');
  });

  it('gives each code its own problem type', () => {
    const types = Object.keys(ERRORS).map((code) => problemType(code as keyof typeof ERRORS));
    expect(new Set(types).size).to.equal(types.length);
  });
});
