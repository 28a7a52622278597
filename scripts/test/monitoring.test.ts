import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import GithubSlugger from 'github-slugger';
import { parse } from 'yaml';
import { INFRA_FILES, RULES_FILE } from '@payments/infra';
import { useSystem } from '@payments/testkit';
import { findPromtool } from './promtool.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const MONITORING = path.join(ROOT, 'infra/monitoring');
const PROMETHEUS_RULE = 'infra/k8s/prometheus-rules.yaml';
const run = promisify(execFile);

/** Metrics from exporters the rules assume (rules.yml's header), by the job that scrapes them. */
const EXPORTED_ELSEWHERE: Record<string, string[]> = {
  prometheus: ['up'],
  rabbitmq: ['rabbitmq_raft_term_total', 'rabbitmq_queue_messages', 'rabbitmq_queue_messages_ready'],
  postgres: ['pg_up', 'pg_stat_replication_pg_wal_lsn_diff', 'pg_replication_lag', 'pg_stat_activity_count'],
};

/** The alerts that must be seen firing in rules.test.yml: the money paths' and every broker and database one. */
const MUST_FIRE_IN_TESTS = [
  'PaymentsServerErrors',
  'PaymentsUpstreamUnreachable',
  'PaymentsDeadLetters',
  'PaymentsWithdrawalsAwaitingReconciliation',
  'PaymentsProviderFailing',
  'PaymentsProviderRequestStuck',
  'PaymentsProviderRequestsExpired',
  'PaymentsReconciliationCasesOpen',
];
const GROUPS_THAT_MUST_FIRE_IN_TESTS = ['payments.outbox-and-broker', 'payments.database'];

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  annotations?: Record<string, string>;
}
interface RuleGroup {
  name: string;
  rules: Rule[];
}
interface RuleTests {
  tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
}
interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
}

let promtoolPath: Promise<string> | undefined;

/** promtool's answer; one is fetched when the machine has none (promtool.ts), and a machine that can't fails. */
async function promtool(args: string[], cwd = MONITORING): Promise<{ ok: boolean; output: string }> {
  const file = await (promtoolPath ??= findPromtool());
  try {
    const { stdout, stderr } = await run(file, args, { cwd });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const failed = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

const PROMQL_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring']);

/** The metric names a PromQL expression selects (functions, keywords, labels and Grafana's variables left out). */
function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const before = stripped[match.index - 1] ?? ' ';
    const after = stripped.slice(match.index + match[0].length).trimStart();
    if (/[0-9.]/.test(before) || after.startsWith('(') || PROMQL_KEYWORDS.has(match[0])) continue;
    names.add(match[0]);
  }
  return [...names];
}

/** The series names a /metrics answer declares (`# TYPE`), a histogram's and a summary's parts included. */
function seriesDeclaredIn(exposition: string): string[] {
  return [...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) => {
    const suffixes =
      type === 'histogram' ? ['_bucket', '_count', '_sum'] : type === 'summary' ? ['_count', '_sum'] : [];
    return [name as string, ...suffixes.map((suffix) => `${name}${suffix}`)];
  });
}

describe('alerts and dashboard (infra/monitoring)', function () {
  this.timeout(60_000);
  let groups: RuleGroup[];
  let dashboard: Dashboard;

  before(async () => {
    groups = (parse(await readFile(path.join(ROOT, RULES_FILE), 'utf8')) as { groups: RuleGroup[] }).groups;
    dashboard = JSON.parse(await readFile(path.join(MONITORING, 'dashboard.json'), 'utf8')) as Dashboard;
  });

  const alerts = () => groups.flatMap((group) => group.rules.filter((rule) => rule.alert));

  it('passes promtool check rules, for the compose file and the Kubernetes PrometheusRule alike', async () => {
    const check = await promtool(['check', 'rules', 'rules.yml']);
    expect(check.ok, check.output).to.equal(true);
    expect(check.output).to.match(new RegExp(`SUCCESS: ${alerts().length} rules found`));
    const committed = await readFile(path.join(ROOT, PROMETHEUS_RULE), 'utf8');
    expect(committed, `${PROMETHEUS_RULE} is stale: run pnpm infra:files`).to.equal(
      INFRA_FILES[PROMETHEUS_RULE](),
    );
    expect((parse(committed) as { spec: { groups: RuleGroup[] } }).spec.groups).to.deep.equal(groups);
  });

  it('raises each alert its unit tests expect and no other (promtool test rules)', async () => {
    const result = await promtool(['test', 'rules', 'rules.test.yml']);
    expect(result.ok, result.output).to.equal(true);
    expect(result.output).to.include('SUCCESS');
  });

  it('has a unit test that sees each money-path, broker and database alert fire', async () => {
    const tests = parse(await readFile(path.join(MONITORING, 'rules.test.yml'), 'utf8')) as RuleTests;
    const fired = new Set(
      tests.tests.flatMap((test) =>
        (test.alert_rule_test ?? [])
          .filter((check) => (check.exp_alerts ?? []).length > 0)
          .map((check) => check.alertname),
      ),
    );
    const required = [
      ...MUST_FIRE_IN_TESTS,
      ...groups
        .filter((group) => GROUPS_THAT_MUST_FIRE_IN_TESTS.includes(group.name))
        .flatMap((group) => group.rules.map((rule) => rule.alert)),
    ];
    for (const alert of required) {
      expect(
        alerts().some((rule) => rule.alert === alert),
        `${alert} in ${RULES_FILE}`,
      ).to.equal(true);
      expect(fired.has(alert as string), `${alert} seen firing in rules.test.yml`).to.equal(true);
    }
  });

  it('fails the unit tests when an alert can no longer fire (the check can fail)', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'rules-'));
    try {
      const rules = await readFile(path.join(ROOT, RULES_FILE), 'utf8');
      const broken = rules.replace(
        'expr: max by (service) (outbox_oldest_unpublished_seconds) > 60',
        'expr: max by (service) (outbox_oldest_unpublished_second) > 60',
      );
      expect(broken).to.not.equal(rules);
      await writeFile(path.join(folder, 'rules.yml'), broken);
      await writeFile(
        path.join(folder, 'rules.test.yml'),
        await readFile(path.join(MONITORING, 'rules.test.yml'), 'utf8'),
      );
      const result = await promtool(['test', 'rules', 'rules.test.yml'], folder);
      expect(result.ok).to.equal(false);
      expect(result.output).to.include('PaymentsOutboxBehind');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('gives compose’s Prometheus a valid configuration that loads the rules file', async () => {
    const check = await promtool(['check', 'config', '--syntax-only', 'prometheus.yml']);
    expect(check.ok, check.output).to.equal(true);
    const config = parse(await readFile(path.join(MONITORING, 'prometheus.yml'), 'utf8')) as {
      rule_files: string[];
      scrape_configs: { job_name: string }[];
    };
    expect(config.rule_files).to.deep.equal([path.basename(RULES_FILE)]);
    expect(config.scrape_configs.map((job) => job.job_name)).to.include.members(['payments', 'rabbitmq']);
  });

  it('has a dashboard with the panels an operator opens first, each with a query', () => {
    const titles = dashboard.panels.map((panel) => panel.title.toLowerCase());
    for (const topic of [
      'gateway',
      'money requests',
      'outbox',
      'dead letters',
      'provider',
      'reconciliation',
      'database',
    ])
      expect(
        titles.some((title) => title.includes(topic)),
        topic,
      ).to.equal(true);
    for (const panel of dashboard.panels) expect(panel.targets, panel.title).to.have.length.greaterThan(0);
  });

  it('points every alert at a section of docs/operations.md that exists', async () => {
    const slugger = new GithubSlugger();
    const markdown = await readFile(path.join(ROOT, 'docs/operations.md'), 'utf8');
    const anchors = new Set(
      [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((heading) => slugger.slug(heading[1] as string)),
    );
    for (const rule of alerts()) {
      const runbook = rule.annotations?.runbook ?? '';
      expect(runbook, rule.alert).to.match(/^docs\/operations\.md#/);
      expect(anchors.has(runbook.split('#')[1] as string), `${rule.alert}: ${runbook}`).to.equal(true);
      expect(rule.annotations?.summary, rule.alert).to.be.a('string');
    }
  });
});

describe('alerts and dashboard against a running system', function () {
  this.timeout(120_000);
  const system = useSystem();
  let groups: RuleGroup[];
  let dashboard: Dashboard;

  before(async () => {
    groups = (parse(await readFile(path.join(ROOT, RULES_FILE), 'utf8')) as { groups: RuleGroup[] }).groups;
    dashboard = JSON.parse(await readFile(path.join(MONITORING, 'dashboard.json'), 'utf8')) as Dashboard;
  });

  const alerts = () => groups.flatMap((group) => group.rules.filter((rule) => rule.alert));

  it('uses only metrics the services serve at /metrics or an assumed exporter serves, in every rule and panel', async () => {
    const known = new Set(Object.values(EXPORTED_ELSEWHERE).flat());
    for (const url of Object.values(system.urls)) {
      const response = await fetch(`${url}/metrics`, {
        headers: { authorization: `Bearer ${system.serviceToken}` },
      });
      expect(response.status, url).to.equal(200);
      for (const name of seriesDeclaredIn(await response.text())) known.add(name);
    }
    // The scrape finds what the code registers, and the parser finds a misspelt name.
    expect(known).to.include.members([
      'outbox_oldest_unpublished_seconds',
      'gateway_upstream_duration_seconds_bucket',
    ]);
    expect(
      metricNamesIn('sum by (le) (rate(ledger_provider_calls_totl{outcome="done"}[5m])) > 0'),
    ).to.deep.equal(['ledger_provider_calls_totl']);
    const used = [
      ...alerts().map((rule) => ({ where: rule.alert, expr: rule.expr })),
      ...dashboard.panels.flatMap((panel) =>
        panel.targets.map((target) => ({ where: panel.title, ...target })),
      ),
    ];
    expect(used.length).to.be.greaterThan(40);
    for (const { where, expr } of used) {
      const names = metricNamesIn(expr);
      expect(names, `${where}: ${expr}`).to.have.length.greaterThan(0);
      for (const name of names)
        expect(known.has(name), `${where} uses ${name}, which nothing exports`).to.equal(true);
    }
  });
});
