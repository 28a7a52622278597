import { expect } from 'chai';
import { buildOpenApiDocument } from '../../gateway/src/openapi/openapi-document.js';
import {
  allowsBreakingChanges,
  breakingChanges,
  committedDocument,
  describeBreakingChanges,
  generatedDocument,
  WRITE_COMMAND,
} from '../openapi-contract.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a built document

/** The document as the gateway builds it, changed by `change`. */
function changed(change: (document: Json) => void): Json {
  const document = structuredClone(buildOpenApiDocument()) as Json;
  change(document);
  return document;
}

const schemas = (document: Json) => document.components.schemas as Json;
const descriptions = (before: Json, after: Json) => breakingChanges(before, after).map((c) => c.description);

describe('the committed API contract (docs/openapi.json)', function () {
  this.timeout(60_000);
  const current = buildOpenApiDocument() as Json;

  it(`is the document the gateway builds (run \`${WRITE_COMMAND}\` after changing an operation)`, async () => {
    const committed = await committedDocument();
    expect(committed, `docs/openapi.json is missing: run \`${WRITE_COMMAND}\``).to.be.a('string');
    expect(
      committed === (await generatedDocument()),
      `docs/openapi.json is not the document the operations build: run \`${WRITE_COMMAND}\` and commit it`,
    ).to.equal(true);
  });

  it('is not broken by the document the gateway builds, unless the major version is new', async () => {
    const committed = JSON.parse((await committedDocument()) ?? '{}') as Json;
    const changes = breakingChanges(committed, current);
    if (allowsBreakingChanges(committed, current)) return;
    expect(changes, describeBreakingChanges(changes, committed.info?.version)).to.deep.equal([]);
  });

  describe('finds what breaks a client', () => {
    it('nothing between a document and itself', () => {
      expect(
        breakingChanges(
          current,
          changed(() => {}),
        ),
      ).to.deep.equal([]);
    });

    it('a field removed from a response', () => {
      const after = changed((document) => {
        const transaction = schemas(document).Transaction;
        delete transaction.properties.currency;
        transaction.required = transaction.required.filter((name: string) => name !== 'currency');
      });
      const changes = breakingChanges(current, after);
      expect(changes.map((change) => change.description)).to.include(
        '[Removed] property `currency` in Response 202 content (application/json)',
      );
      // Reported wherever the schema is answered: the money operations' 202 and the transaction's 200.
      expect(changes.map((change) => change.at)).to.include.members([
        '#/paths/~1account~1{id}~1deposit/post/responses/202/content/application~1json/schema/properties/currency',
        '#/paths/~1transaction~1{id}/get/responses/200/content/application~1json/schema/properties/currency',
      ]);
    });

    it('an optional field removed from a response', () => {
      const after = changed((document) => delete schemas(document).Transaction.properties.fee);
      expect(descriptions(current, after)).to.include(
        '[Removed] property `fee` in Response 202 content (application/json)',
      );
    });

    it('a field removed from a request body', () => {
      const after = changed((document) => delete schemas(document).MoneyRequest.properties.metadata);
      expect(descriptions(current, after)).to.include(
        '[Removed] property `metadata` in Request Body content (application/json)',
      );
    });

    it('a value removed from an enum a request may send', () => {
      const after = changed((document) => {
        schemas(document).StatusChange.properties.status.anyOf.pop(); // locked
        const type = document.paths['/transactions'].get.parameters.find((p: Json) => p.name === 'type');
        type.schema.anyOf.pop(); // reversal
      });
      expect(descriptions(current, after)).to.include.members([
        '[Removed] anyOf schema from `status` in Request Body content (application/json)',
        '[Removed] anyOf schema in query parameter `type`',
      ]);
    });

    it('an optional request field made required', () => {
      const after = changed((document) => schemas(document).MoneyRequest.required.push('reference'));
      expect(descriptions(current, after)).to.include(
        '[Added] required status to `reference` in Request Body content (application/json)',
      );
    });

    it('a response field whose type or value changes', () => {
      const after = changed((document) => {
        schemas(document).Transaction.properties.amount = { type: 'string' };
        schemas(document).Transaction.properties.status.anyOf[3].const = 'cancelled';
      });
      const changes = descriptions(current, after).join('\n');
      expect(changes).to.contain('[Replaced] type definition of `amount` in Response 202');
      expect(changes).to.contain('[Replaced] possible value of `status` in Response 202');
    });

    it('an operation removed, a required parameter added, a field removed from an outgoing event', () => {
      const after = changed((document) => {
        delete document.paths['/transaction/{id}'];
        document.paths['/transactions'].get.parameters.push({
          name: 'account_id',
          in: 'query',
          required: true,
          schema: { type: 'string' },
        });
        delete schemas(document).WebhookEvent.properties.created_at;
        schemas(document).WebhookEvent.required.pop();
      });
      const changes = breakingChanges(current, after);
      expect(changes.map((change) => change.description)).to.include.members([
        '[Removed] operation GET /transaction/{id}',
        '[Added] required query parameter `account_id`',
      ]);
      expect(changes.map((change) => change.at)).to.include(
        '#/webhooks/event/post/responses/200/content/application~1json/schema/properties/created_at',
      );
    });
  });

  describe('lets through what a client does not notice', () => {
    it('optional fields added to a request and to a response', () => {
      const after = changed((document) => {
        schemas(document).MoneyRequest.properties.description = { type: 'string', maxLength: 500 };
        schemas(document).Transaction.properties.description = { type: 'string' };
        schemas(document).WebhookEvent.properties.livemode = { type: 'boolean' };
      });
      expect(breakingChanges(current, after)).to.deep.equal([]);
    });

    it('a new operation, a new accepted value, a new error status, a new tag, examples and words', () => {
      const after = changed((document) => {
        document.paths['/refunds'] = { get: structuredClone(document.paths['/transactions'].get) };
        document.paths['/refunds'].get.operationId = 'listRefunds';
        schemas(document).StatusChange.properties.status.anyOf.push({ const: 'frozen', type: 'string' });
        document.paths['/transactions'].get.responses['409'] = { $ref: '#/components/responses/Conflict' };
        document.paths['/transactions'].get.summary = 'All of your transactions';
        delete document.paths['/transaction/{id}'].get.responses['200'].content['application/json'].example;
        // A new group of operations listed between two others, and an operation moved into it.
        document.tags.splice(3, 0, { name: 'Refunds', description: 'Money given back' });
        document.paths['/transactions'].get.tags = ['Refunds'];
      });
      expect(breakingChanges(current, after)).to.deep.equal([]);
    });

    it('a new way to authenticate, offered beside the token', () => {
      const after = changed((document) => {
        document.components.securitySchemes.apiKey = { type: 'http', scheme: 'bearer' };
        document.security.push({ apiKey: [] });
      });
      expect(breakingChanges(current, after)).to.deep.equal([]);
      const replaced = changed((document) => {
        document.components.securitySchemes.bearerAuth = { type: 'apiKey', in: 'header', name: 'X-Key' };
      });
      expect(breakingChanges(current, replaced)).to.not.deep.equal([]);
    });

    it('a new event type and a new API version, even where a client reads them', () => {
      const after = changed((document) => {
        const event = schemas(document).WebhookEvent.properties;
        event.type.anyOf.push({ const: 'refund.created', type: 'string' });
        event.api_version.anyOf.push({ const: '1.2', type: 'string' });
        document.components.headers.XApiVersion.schema.enum.push('1.2');
      });
      expect(breakingChanges(current, after, ['1.2', 'refund.created'])).to.deep.equal([]);
      // Any other value added to what a client reads may fall outside what it handles.
      expect(breakingChanges(current, after, [])).to.not.deep.equal([]);
    });
  });

  it('lets a breaking change through only with a new major version', () => {
    const at = (version: string) => ({ info: { version } });
    expect(allowsBreakingChanges(at('1.1'), at('2.0'))).to.equal(true);
    expect(allowsBreakingChanges(at('1.1'), at('1.2'))).to.equal(false);
    expect(allowsBreakingChanges(at('1.1'), at('1.1'))).to.equal(false);
    const message = describeBreakingChanges(
      [{ description: '[Removed] operation GET /transaction/{id}', at: '#/paths/~1transaction~1{id}/get' }],
      '1.1',
    );
    expect(message).to.contain('breaks clients of version 1.1');
    expect(message).to.contain('GET /transaction/{id}');
    expect(message).to.contain(WRITE_COMMAND);
  });
});
