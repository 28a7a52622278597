import { readFileSync } from 'node:fs';

/** The alerting rules, in Prometheus's own format: the one source the Kubernetes PrometheusRule is made from. */
export const RULES_FILE = 'infra/monitoring/rules.yml';

/**
 * infra/k8s/prometheus-rules.yaml: the rules file's groups as the spec of a prometheus-operator PrometheusRule, line
 * for line (its comments kept), so the two can never say different things.
 */
export function renderPrometheusRule(rules: string): string {
  const start = rules.search(/^groups:/m);
  if (start < 0) throw new Error(`${RULES_FILE} has no top-level groups:`);
  const groups = rules
    .slice(start)
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
  return [
    `# Generated from ${RULES_FILE} by \`pnpm infra:files\`: edit that file, not this one.`,
    'apiVersion: monitoring.coreos.com/v1',
    'kind: PrometheusRule',
    'metadata:',
    '  name: payments',
    '  namespace: payments',
    '  labels: { app.kubernetes.io/part-of: payments }',
    'spec:',
    groups,
    '',
  ].join('\n');
}

/** Read from the checkout this module lies in (packages/infra/src or dist). */
export function renderPrometheusRuleFromCheckout(): string {
  return renderPrometheusRule(readFileSync(new URL(`../../../${RULES_FILE}`, import.meta.url), 'utf8'));
}
