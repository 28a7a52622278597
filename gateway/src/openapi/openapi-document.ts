import type { TSchema } from '@sinclair/typebox';
import {
  API_VERSIONS,
  COMPONENT_SCHEMAS,
  CURRENT_VERSION,
  DEFAULT_VERSION,
  ERRORS,
  PROBLEM_CONTENT_TYPE,
  QUERY_SCHEMAS,
  Uuid,
  type ErrorCode,
  type QueryName,
} from '@payments/contracts';
import {
  DEAD_LETTER_QUEUES,
  OPERATION_EXAMPLES,
  OPERATIONS,
  PROBLEM_EXAMPLES,
  TAGS,
  WEBHOOK_ERROR_EXAMPLES,
  WEBHOOK_EVENT_EXAMPLE,
  type ErrorStatus,
  type Operation,
  type OperationId,
} from '@payments/contracts/operations';

type Json = Record<string, unknown>;

/** An operation with the id it is declared under. */
type DocumentedOperation = Operation & { operationId: OperationId };

const DOCUMENTED: DocumentedOperation[] = (Object.entries(OPERATIONS) as [OperationId, Operation][]).map(
  ([operationId, operation]) => ({ operationId, ...operation }),
);

const DESCRIPTION = `
Accounts, asynchronous money movements and a currency catalogue behind one gateway.

**Authentication.** Get a token from \`POST /auth/login\` and send \`Authorization: Bearer <token>\`. Operations
with a lock need it; the others are public.

**Versioning.** The version comes from, in order: the path prefix (\`/v1.1/accounts\`; see the servers), the
\`Accept\` media type \`application/vnd.service.v1.1+json\`, the \`X-API-Version\` header (\`1.1\` or \`v1.1\`); else
${DEFAULT_VERSION}. The first source present decides. Versions: ${API_VERSIONS.join(', ')} (current
${CURRENT_VERSION}). An unsupported version is a 400. Every response carries \`X-API-Version\`. Version 1.1 adds
transaction fees, conversions and exchange rates; 1.0 answers omit those fields. When a major version is retired, its
responses carry \`Deprecation\` and \`Sunset\` headers for the deprecation period.

**Errors** are RFC 9457 \`application/problem+json\` with a stable \`code\`:
${(Object.keys(ERRORS) as ErrorCode[]).map((code) => `\`${code}\` (${ERRORS[code].status})`).join(', ')}.
Validation errors list the fields in \`errors\`; \`instance\` is the request path. Webhooks answer \`{ "error" }\`.

**Limits.** Requests are limited per client address and per user; the \`RateLimit-Policy\` and \`RateLimit\`
headers tell where you stand, and a 429 carries \`Retry-After\`. Lists take \`limit\` (default 20, at most 100) and
\`offset\`.
`.trim();

const ERROR_RESPONSES: Record<ErrorStatus | 429 | 500 | 503, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'VALIDATION_ERROR: invalid JSON, fields, query or API version' },
  401: { name: 'Unauthorized', description: 'AUTH_REQUIRED or INVALID_CREDENTIALS' },
  403: {
    name: 'Forbidden',
    description: 'ACCESS_DENIED: not yours, not allowed, or a disabled or locked user',
  },
  404: { name: 'NotFound', description: 'RESOURCE_NOT_FOUND (also for a malformed id)' },
  409: {
    name: 'Conflict',
    description: 'DUPLICATE_ENTRY, or CONFLICT (stale If-Match, reused Idempotency-Key)',
  },
  413: { name: 'PayloadTooLarge', description: 'PAYLOAD_TOO_LARGE' },
  415: { name: 'UnsupportedMediaType', description: 'UNSUPPORTED_MEDIA_TYPE: the body must be JSON' },
  422: {
    name: 'UnprocessableEntity',
    description: 'INSUFFICIENT_FUNDS, INVALID_CURRENCY, INVALID_AMOUNT or BUSINESS_RULE_VIOLATION',
  },
  429: { name: 'TooManyRequests', description: 'RATE_LIMIT_EXCEEDED; see Retry-After' },
  500: { name: 'InternalError', description: 'INTERNAL_ERROR; nothing internal is revealed' },
  503: { name: 'ServiceUnavailable', description: 'SERVICE_UNAVAILABLE: a service is down; see Retry-After' },
};

/** An unsupported API version (400), a limit (429), a fault (500) or a service down (503) can meet any call. */
const ALWAYS = [400, 429, 500, 503] as const;

/** A provider's webhooks answer errors with `{ error }` instead of problem+json. */
const answersAsWebhook = (operation: Operation) => operation.access === 'provider';

function errorStatuses(operation: DocumentedOperation): (keyof typeof ERROR_RESPONSES)[] {
  return [...new Set([...operation.errors, ...ALWAYS])].sort((a, b) => a - b);
}

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** A TypeBox schema as plain JSON Schema (its symbols dropped). */
const plain = (schema: TSchema): Json => JSON.parse(JSON.stringify(schema)) as Json;

const COMMON_RESPONSE_HEADERS = {
  'X-API-Version': ref('headers', 'XApiVersion'),
  'X-Request-Id': ref('headers', 'XRequestId'),
};
const RATE_LIMIT_HEADERS = {
  RateLimit: ref('headers', 'RateLimit'),
  'RateLimit-Policy': ref('headers', 'RateLimitPolicy'),
};

function components(): Json {
  const problemResponse = (status: number, description: string, extra: Json = {}) => ({
    description,
    headers: { ...COMMON_RESPONSE_HEADERS, ...extra },
    content: {
      [PROBLEM_CONTENT_TYPE]: { schema: ref('schemas', 'Problem'), examples: problemExamples(status) },
    },
  });
  const webhookResponse = (status: number, description: string, extra: Json = {}) => ({
    description,
    headers: { ...COMMON_RESPONSE_HEADERS, ...extra },
    content: {
      'application/json': {
        schema: ref('schemas', 'WebhookError'),
        ...(WEBHOOK_ERROR_EXAMPLES[status] ? { example: WEBHOOK_ERROR_EXAMPLES[status] } : {}),
      },
    },
  });
  const responses: Json = {};
  for (const operation of DOCUMENTED) {
    const webhook = answersAsWebhook(operation);
    for (const status of errorStatuses(operation)) {
      const { name, description } = ERROR_RESPONSES[status];
      const extra: Json =
        status === 429
          ? { 'Retry-After': ref('headers', 'RetryAfter'), ...RATE_LIMIT_HEADERS }
          : status === 503
            ? { 'Retry-After': ref('headers', 'RetryAfter') }
            : {};
      responses[webhook ? `Webhook${name}` : name] = webhook
        ? webhookResponse(status, description, extra)
        : problemResponse(status, description, extra);
    }
  }
  const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });
  return {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'A token from POST /auth/login',
      },
      serviceToken: {
        type: 'http',
        scheme: 'bearer',
        description: "The deployment's SERVICE_TOKEN (operators and Prometheus), not a user's token",
      },
    },
    schemas: Object.fromEntries(
      Object.entries(COMPONENT_SCHEMAS).map(([name, schema]) => [name, plain(schema)]),
    ),
    parameters: {
      ApiVersion: {
        name: 'X-API-Version',
        in: 'header',
        required: false,
        description:
          'The API version, when neither the path prefix nor `Accept: application/vnd.service.v1.1+json` names one',
        schema: { type: 'string', enum: API_VERSIONS.flatMap((version) => [version, `v${version}`]) },
      },
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Replays the first answer for a retry with the same body; another body is a 409',
        schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
      },
      IfMatch: {
        name: 'If-Match',
        in: 'header',
        required: false,
        description: 'The ETag read before; a stale one gives 409',
        schema: { type: 'string' },
      },
      WebhookSignature: {
        name: 'X-Webhook-Signature',
        in: 'header',
        required: true,
        description: '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`',
        schema: { type: 'string' },
      },
      ProviderSignature: {
        name: 'Provider-Signature',
        in: 'header',
        required: true,
        description: '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`',
        schema: { type: 'string' },
      },
    },
    headers: {
      XApiVersion: header('The version the response was served in', {
        type: 'string',
        enum: [...API_VERSIONS],
      }),
      XRequestId: header('The request id (echoed, or created), also in the services’ logs'),
      Location: header('Where the created resource or the accepted transaction is'),
      ETag: header('The version of the representation'),
      CacheControl: header('How long the answer may be reused'),
      IdempotentReplayed: header('`true` when this answer replays an earlier request with the same key', {
        type: 'string',
        enum: ['true'],
      }),
      RateLimit: header('What is left of each policy, e.g. `"address";r=99;t=10`'),
      RateLimitPolicy: header('The policies applied, e.g. `"address";q=100;w=10`'),
      RetryAfter: header('Seconds to wait before trying again', { type: 'integer', minimum: 0 }),
      Link: header('`<?…>; rel="next"`: the next page of a CSV statement, relative to this request'),
      ContentDisposition: header('A file name for a CSV statement'),
    },
    responses,
  };
}

/** The problem+json example of each error code answered with `status`, by code. */
function problemExamples(status: number): Json {
  return Object.fromEntries(
    (Object.keys(ERRORS) as ErrorCode[])
      .filter((code) => ERRORS[code].status === status)
      .map((code) => [code, { summary: ERRORS[code].title, value: PROBLEM_EXAMPLES[code] }]),
  );
}

/** The example of a body, when the operation's examples give one. */
const exampleOf = (value: unknown): Json => (value === undefined ? {} : { example: value });

function parameters(operation: DocumentedOperation): Json[] {
  const path = [...operation.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => pathParameter(name as string));
  const query = operation.query ? queryParameters(operation.query) : [];
  const extra = (operation.extraQuery ?? []).map((param) => ({ ...param, in: 'query', required: false }));
  const headers = (operation.headers ?? []).map((name) => ref('parameters', name));
  return [...path, ...query, ...extra, ...headers];
}

function pathParameter(name: string): Json {
  if (name === 'id') {
    return {
      name,
      in: 'path',
      required: true,
      description: 'A UUID; anything else names nothing (404)',
      schema: plain(Uuid),
    };
  }
  if (name === 'delivery_id') {
    return { name, in: 'path', required: true, description: 'A delivery id (UUID)', schema: plain(Uuid) };
  }
  if (name === 'queue') {
    return {
      name,
      in: 'path',
      required: true,
      description: 'A consumer queue, named by the service that consumes it; any other is a 404',
      schema: { type: 'string', enum: DEAD_LETTER_QUEUES },
    };
  }
  if (name === 'region') {
    return {
      name,
      in: 'path',
      required: true,
      description: 'A continent name or code, e.g. Europe or EU',
      schema: { type: 'string' },
    };
  }
  return {
    name,
    in: 'path',
    required: true,
    description: 'A three-letter ISO 4217 code in any case (else 400)',
    schema: { type: 'string', pattern: '^[A-Za-z]{3}$' },
  };
}

/** A pattern of query names `name[key]`: the parameter `name`, an object sent as `deepObject`. */
const DEEP_OBJECT = /^\^([a-z_]+)\\\[/;

/**
 * Each property of a query schema the service validates with, as a parameter; and each of its pattern properties
 * of the form `name[key]` as one `deepObject` parameter `name`.
 */
function queryParameters(name: QueryName): Json[] {
  const schema = QUERY_SCHEMAS[name];
  const required = new Set(schema.required ?? []);
  const patterns = (schema as { patternProperties?: Record<string, TSchema> }).patternProperties ?? {};
  const deepObjects = Object.entries(patterns).flatMap(([pattern, property]) => {
    const parameter = DEEP_OBJECT.exec(pattern)?.[1];
    if (!parameter) return [];
    const { description, ...value } = plain(property);
    return [
      {
        name: parameter,
        in: 'query',
        required: false,
        style: 'deepObject',
        explode: true,
        ...(description ? { description } : {}),
        schema: { type: 'object', additionalProperties: value },
      },
    ];
  });
  return [...queryProperties(schema, required), ...deepObjects];
}

function queryProperties(schema: (typeof QUERY_SCHEMAS)[QueryName], required: Set<string>): Json[] {
  return Object.entries(schema.properties).map(([name, property]) => {
    const { description, ...rest } = plain(property);
    return {
      name,
      in: 'query',
      required: required.has(name) && rest.default === undefined,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

function successResponse(operation: DocumentedOperation): Json {
  const { status, description, schema, mediaType, alsoAs, headers = [] } = operation.success;
  const examples = OPERATION_EXAMPLES[operation.operationId] ?? {};
  const named = Object.fromEntries(headers.map((name) => [headerName(name), ref('headers', name)]));
  const alternative = alsoAs
    ? { [alsoAs]: { schema: { type: 'string' }, ...exampleOf(examples.alternative) } }
    : {};
  const body = schema
    ? {
        content: {
          'application/json': { schema: ref('schemas', schema), ...exampleOf(examples.response) },
          ...alternative,
        },
      }
    : mediaType
      ? {
          content: {
            [mediaType]: {
              schema: { type: mediaType === 'application/json' ? 'object' : 'string' },
              ...exampleOf(examples.response),
            },
          },
        }
      : {};
  return {
    [status]: {
      description,
      headers: { ...COMMON_RESPONSE_HEADERS, ...RATE_LIMIT_HEADERS, ...named },
      ...body,
    },
  };
}

function headerName(component: string): string {
  return (
    {
      Location: 'Location',
      ETag: 'ETag',
      CacheControl: 'Cache-Control',
      IdempotentReplayed: 'Idempotent-Replayed',
      ContentDisposition: 'Content-Disposition',
    }[component] ?? component
  );
}

function responses(operation: DocumentedOperation): Json {
  const prefix = answersAsWebhook(operation) ? 'Webhook' : '';
  const errors = Object.fromEntries(
    errorStatuses(operation).map((status) => [
      status,
      ref('responses', `${prefix}${ERROR_RESPONSES[status].name}`),
    ]),
  );
  const also: Json = {};
  for (const status of operation.alsoAnswers ?? []) {
    also[status] =
      status === 304
        ? {
            description: 'Not modified: the `If-None-Match` ETag is current',
            headers: COMMON_RESPONSE_HEADERS,
          }
        : {
            description: 'Not ready',
            headers: COMMON_RESPONSE_HEADERS,
            content: { 'application/json': { schema: ref('schemas', operation.success.schema as string) } },
          };
  }
  return { ...successResponse(operation), ...also, ...errors };
}

function securityOf(operation: Operation): Json {
  if (operation.access === 'service') return { security: [{ serviceToken: [] }] };
  return operation.access === 'public' || operation.access === 'provider' ? { security: [] } : {};
}

function operationObject(operation: DocumentedOperation): Json {
  return {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    ...securityOf(operation),
    ...(parameters(operation).length ? { parameters: parameters(operation) } : {}),
    ...(operation.body
      ? {
          requestBody: {
            required: operation.bodyOptional !== true,
            content: {
              'application/json': {
                schema: ref('schemas', operation.body),
                ...exampleOf(OPERATION_EXAMPLES[operation.operationId]?.request),
              },
            },
          },
        }
      : {}),
    responses: responses(operation),
  };
}

/** What a registered endpoint receives: OpenAPI 3.1's `webhooks`. */
function outgoingWebhooks(): Json {
  return {
    event: {
      post: {
        operationId: 'receiveEvent',
        summary: 'An event, POSTed to each subscribed endpoint',
        description:
          'Verify `Stripe-Signature` over the raw body before parsing (any Stripe webhook library does, e.g. ' +
          '`stripe.webhooks.constructEvent(body, header, secret)`); answer 2xx within 10 s. Anything else is ' +
          'retried with exponential backoff for 3 days. Events may arrive more than once and out of order.',
        security: [],
        parameters: [
          {
            name: 'Stripe-Signature',
            in: 'header',
            required: true,
            description:
              '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1` during a rotation',
            schema: { type: 'string' },
          },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: ref('schemas', 'WebhookEvent'), example: WEBHOOK_EVENT_EXAMPLE },
          },
        },
        responses: { '200': { description: 'Received (any 2xx)' } },
      },
    },
  };
}

/** The OpenAPI 3.1 document of everything the gateway serves, built once at start. */
export function buildOpenApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const operation of DOCUMENTED) {
    paths[operation.path] ??= { parameters: [ref('parameters', 'ApiVersion')] };
    (paths[operation.path] as Json)[operation.method] = operationObject(operation);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Payments API',
      version: CURRENT_VERSION,
      description: DESCRIPTION,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [
      { url: '/', description: 'Version from the Accept or X-API-Version header, else 1.0' },
      ...[...API_VERSIONS]
        .reverse()
        .map((version) => ({ url: `/v${version}`, description: `Version ${version}` })),
    ],
    security: [{ bearerAuth: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    webhooks: outgoingWebhooks(),
    components: components(),
  };
}
