import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'chai';
import { ERRORS, PROBLEM_CONTENT_TYPE, STATEMENT_CSV_COLUMNS, type ErrorCode } from '@payments/contracts';
import { OPERATION_EXAMPLES } from '@payments/contracts/operations';
import { buildOpenApiDocument } from '../src/openapi/openapi-document.js';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a built document

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const WHERE_EXAMPLES_LIVE = 'packages/contracts/src/operations/examples/';

/** One body the document describes: where, its media type and schema, and the examples it gives of it. */
interface Body {
  where: string;
  operationId: string;
  mediaType: string;
  schema: Json;
  examples: unknown[];
}

/** The examples a media type object gives: its `example`, and each value of its `examples`. */
function examplesOf(media: Json): unknown[] {
  return [
    ...('example' in media ? [media.example] : []),
    ...Object.values((media.examples ?? {}) as Record<string, Json>).map((example) => example.value),
  ];
}

function bodiesOf(document: Json): { requests: Body[]; successes: Body[]; errors: Body[] } {
  const requests: Body[] = [];
  const successes: Body[] = [];
  const errors: Body[] = [];
  const add = (into: Body[], where: string, operationId: string, content: Record<string, Json> = {}) => {
    for (const [mediaType, media] of Object.entries(content)) {
      into.push({ where, operationId, mediaType, schema: media.schema as Json, examples: examplesOf(media) });
    }
  };
  const operations = [
    ...Object.entries(document.paths as Json),
    ...Object.entries(document.webhooks as Json).map(([name, item]) => [`webhook ${name}`, item] as const),
  ];
  for (const [path, item] of operations) {
    for (const method of METHODS.filter((name) => name in (item as Json))) {
      const operation = (item as Json)[method] as Json;
      const where = `${method.toUpperCase()} ${path}`;
      add(requests, `${where} request`, operation.operationId, operation.requestBody?.content);
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        if (/^2/.test(status)) add(successes, `${where} ${status}`, operation.operationId, response.content);
      }
    }
  }
  for (const [name, response] of Object.entries(document.components.responses as Record<string, Json>)) {
    add(errors, `components.responses.${name}`, name, response.content);
  }
  return { requests, successes, errors };
}

/** Each operation's body that the document shows no example of, as `operationId (where, media type)`. */
function missingExamples(document: Json): string[] {
  const { requests, successes } = bodiesOf(document);
  return [...requests, ...successes]
    .filter((body) => body.examples.length === 0)
    .map((body) => `${body.operationId} (${body.where}, ${body.mediaType})`);
}

function validator(document: Json) {
  const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
  const components = document.components as Json;
  return (schema: Json, value: unknown): string | undefined => {
    const validate = ajv.compile({ ...schema, components });
    return validate(value) ? undefined : ajv.errorsText(validate.errors);
  };
}

describe('the examples in the OpenAPI document', () => {
  const document = buildOpenApiDocument() as Json;
  const { requests, successes, errors } = bodiesOf(document);
  const check = validator(document);

  it('give every operation an example of the body it takes and of its success', () => {
    const missing = missingExamples(document);
    expect(
      missing,
      `Operations without examples; add them to ${WHERE_EXAMPLES_LIVE}:\n  ${missing.join('\n  ')}\n`,
    ).to.deep.equal([]);
    // Not vacuous: the document has bodies, and the bodies have examples.
    expect(requests.length).to.be.greaterThan(15);
    expect(successes.length).to.be.greaterThan(50);
  });

  it('are missed, by operation, where an operation has none', () => {
    const { getAccount, deposit } = OPERATION_EXAMPLES;
    try {
      delete OPERATION_EXAMPLES.getAccount;
      OPERATION_EXAMPLES.deposit = { response: deposit?.response };
      expect(missingExamples(buildOpenApiDocument() as Json)).to.have.members([
        'getAccount (GET /account/{id} 200, application/json)',
        'deposit (POST /account/{id}/deposit request, application/json)',
      ]);
    } finally {
      Object.assign(OPERATION_EXAMPLES, { getAccount, deposit });
    }
  });

  it('are each valid against the schema the document gives them', () => {
    const invalid = [...requests, ...successes, ...errors].flatMap((body) =>
      body.mediaType.endsWith('json')
        ? body.examples.flatMap((example) => {
            const problem = check(body.schema, example);
            return problem ? [`${body.where} (${body.mediaType}): ${problem}`] : [];
          })
        : [],
    );
    expect(invalid, `Examples that do not match their schema:\n  ${invalid.join('\n  ')}\n`).to.deep.equal(
      [],
    );
  });

  it('are checked with formats: a malformed id, moment or e-mail address is refused', () => {
    const transaction = { $ref: '#/components/schemas/Transaction' };
    const example = OPERATION_EXAMPLES.getTransaction?.response as Json;
    expect(check(transaction, example)).to.equal(undefined);
    expect(check(transaction, { ...example, id: 'txn_8812' })).to.match(/format "uuid"/);
    expect(check(transaction, { ...example, created_at: '14/03/2026' })).to.match(/format "date-time"/);
    expect(check(transaction, { ...example, surprise: true })).to.match(/additional properties/);
    const user = { $ref: '#/components/schemas/NewUser' };
    const registration = OPERATION_EXAMPLES.registerUser?.request as Json;
    expect(check(user, { ...registration, email: 'ada at example.com' })).to.match(/format "email"/);
  });

  it('show the problem body of every error code under the response of its status', () => {
    for (const code of Object.keys(ERRORS) as ErrorCode[]) {
      const status = ERRORS[code].status;
      const response = errors.find(
        (body) => body.mediaType === PROBLEM_CONTENT_TYPE && body.where.endsWith(`.${responseName(status)}`),
      );
      expect(response, `${status} response`).to.not.equal(undefined);
      expect(response!.examples.map((example) => (example as Json).code)).to.include(code);
    }
  });

  it('show the CSV statement with the columns the ledger writes', () => {
    const csv = OPERATION_EXAMPLES.getStatement?.alternative ?? '';
    expect(csv.split('\r\n')[0]).to.equal(STATEMENT_CSV_COLUMNS.join(','));
    expect(csv.endsWith('\r\n')).to.equal(true);
  });
});

function responseName(status: number): string {
  return (
    {
      400: 'BadRequest',
      401: 'Unauthorized',
      403: 'Forbidden',
      404: 'NotFound',
      409: 'Conflict',
      413: 'PayloadTooLarge',
      415: 'UnsupportedMediaType',
      422: 'UnprocessableEntity',
      429: 'TooManyRequests',
      500: 'InternalError',
      503: 'ServiceUnavailable',
    } as Record<number, string>
  )[status]!;
}
