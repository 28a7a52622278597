import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { createPaymentsClient } from '@payments/client';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, unknown>;

export interface CheckedResponse {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

export interface OpenApiValidator {
  document: Json;
  /**
   * Throws unless `response` is what the document promises for `method path` at its status: a documented
   * status, a documented media type, and a body valid against that media type's schema (none when it has none).
   */
  check(method: string, path: string, response: CheckedResponse): void;
  /** `METHOD template status` of every response checked so far. */
  covered: Set<string>;
}

/** Fetches the document a gateway serves and validates responses against it with ajv (JSON Schema 2020-12). */
export async function loadOpenApiValidator(gatewayUrl: string): Promise<OpenApiValidator> {
  const response = await createPaymentsClient({ baseUrl: gatewayUrl }).rawRequest<Json>(
    'GET',
    '/openapi.json',
    {
      versioned: false,
      auth: false,
    },
  );
  if (response.status !== 200 || !response.body) throw new Error(`/openapi.json answered ${response.status}`);
  const document = response.body;
  const components = document.components as Json;
  const paths = document.paths as Record<string, Json>;
  const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
  const compiled = new Map<string, ValidateFunction>();
  const covered = new Set<string>();

  const templates = Object.keys(paths)
    .map((template) => ({
      template,
      params: (template.match(/\{/g) ?? []).length,
      pattern: new RegExp(`^${template.replace(/\./g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }))
    .sort((a, b) => a.params - b.params);

  const resolve = (value: Json): Json => {
    const target = value.$ref;
    if (typeof target !== 'string') return value;
    const found = target
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, key) => (node as Json | undefined)?.[key], document);
    if (!found) throw new Error(`unresolved $ref ${target}`);
    return resolve(found as Json);
  };

  return {
    document,
    covered,
    check(method, path, response) {
      const bare = path.split('?')[0]!.replace(/^\/v\d+\.\d+(?=\/|$)/, '') || '/';
      const template = templates.find(({ pattern }) => pattern.test(bare))?.template;
      if (!template) throw new Error(`${method} ${bare} is not in the document`);
      const operation = paths[template]![method.toLowerCase()] as Json | undefined;
      if (!operation) throw new Error(`${method} ${template} is not in the document`);
      const responses = operation.responses as Record<string, Json>;
      const documented = responses[String(response.status)] ?? responses.default;
      const where = `${method} ${template} ${response.status}`;
      if (!documented) {
        throw new Error(`${where} is not documented (documented: ${Object.keys(responses).join(', ')})`);
      }
      const content = resolve(documented).content as Record<string, Json> | undefined;
      if (!content) {
        if (response.text !== '')
          throw new Error(`${where} is documented without a body, got ${response.text}`);
        covered.add(where);
        return;
      }
      const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
      const media = content[mediaType];
      if (!media) {
        throw new Error(
          `${where} answered ${mediaType || 'no content type'}, documented: ${Object.keys(content)}`,
        );
      }
      if (mediaType.endsWith('json')) {
        const key = `${where} ${mediaType}`;
        let validate = compiled.get(key);
        if (!validate) {
          validate = ajv.compile({ ...(media.schema as Json), components });
          compiled.set(key, validate);
        }
        if (!validate(response.body)) {
          throw new Error(
            `${where}: the body does not match the document: ${ajv.errorsText(validate.errors)}\n${response.text}`,
          );
        }
      }
      covered.add(where);
    },
  };
}
