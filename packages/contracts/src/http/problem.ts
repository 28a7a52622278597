import { Type } from '@sinclair/typebox';
import { ERRORS, type ErrorCode } from '../errors.js';

export const FieldErrorView = Type.Object(
  { field: Type.String(), message: Type.String() },
  { additionalProperties: false },
);

/** RFC 9457 problem details with our `code`: the body of every error but the webhooks'. */
export const ProblemDetails = Type.Object(
  {
    type: Type.String({ description: 'URI reference naming the problem type, e.g. /problems/auth-required' }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String(),
    instance: Type.String({
      description: 'The path of the request, with its version prefix when one was used',
    }),
    code: Type.Union(
      (Object.keys(ERRORS) as ErrorCode[]).map((code) => Type.Literal(code)),
      { description: 'Stable error code' },
    ),
    errors: Type.Optional(
      Type.Array(FieldErrorView, { minItems: 1, description: 'Field by field, for validation errors' }),
    ),
  },
  { additionalProperties: false },
);

/** Webhook callers get this simpler body instead of a problem. */
export const WebhookErrorView = Type.Object({ error: Type.String() }, { additionalProperties: false });
