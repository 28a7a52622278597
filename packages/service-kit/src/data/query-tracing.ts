import type { Knex } from 'knex';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { SpanKind, tracer, type Span } from '../tracing.js';

interface QueryData {
  __knexQueryUid?: string;
  sql?: string;
}

/** The statement's first word (SELECT, INSERT, WITH, BEGIN…): the span's name, as OpenTelemetry names queries. */
const operationOf = (sql: string) => /^\s*([a-z]+)/i.exec(sql)?.[1]?.toUpperCase() ?? 'QUERY';

const QUERY_TEXT_MAX = 1_000;

/**
 * A CLIENT span for each query the pool runs inside a trace, from knex's query events. A query outside any trace
 * (a poller's look for work) gets none: an idle service's polls would otherwise each start a trace. The text is
 * the statement's, with placeholders; bindings (amounts, ids, secrets) are never recorded.
 */
export function traceQueries(knex: Knex): void {
  const open = new Map<string, Span>();
  knex.on('query', (query: QueryData) => {
    const uid = query.__knexQueryUid;
    if (!uid || !trace.getActiveSpan()) return;
    const sql = query.sql ?? '';
    // Under the active span: knex emits the event in the async context of the caller's query.
    open.set(
      uid,
      tracer().startSpan(operationOf(sql), {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'postgresql',
          'db.operation.name': operationOf(sql),
          'db.query.text': sql.slice(0, QUERY_TEXT_MAX),
        },
      }),
    );
  });
  const end = (query: QueryData, error?: Error) => {
    const uid = query.__knexQueryUid;
    const span = uid === undefined ? undefined : open.get(uid);
    if (!span || uid === undefined) return;
    open.delete(uid);
    if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    span.end();
  };
  knex.on('query-response', (_response: unknown, query: QueryData) => end(query));
  knex.on('query-error', (error: Error, query: QueryData) => end(query, error));
}
