import { readdir, readFile } from 'node:fs/promises';
import { isIPv4 } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments, parse } from 'yaml';
import { Namespace, ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

const ROOT = path.resolve(import.meta.dirname, '..');
const K8S = path.join(ROOT, 'infra/k8s');
/** The services with a database: an owner role its migrations run as, a runtime role it connects as. */
const WITH_DATABASE = ['identity', 'ledger', 'currency', 'webhook-ingest', 'webhook-delivery'];
const databaseOf = (service: string) => `payments_${service.replaceAll('-', '_')}`;

/** Each kind the manifests use, validated against the Kubernetes OpenAPI schema that kubernetes-models ships. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
};

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
  stringData?: Record<string, string>;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string };
  };
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  env: EnvVar[];
  securityContext: Record<string, unknown>;
  readinessProbe?: { httpGet?: { path: string }; exec?: { command: string[] } };
  livenessProbe?: { httpGet: { path: string }; initialDelaySeconds?: number };
  startupProbe?: { httpGet?: { path: string }; periodSeconds: number; failureThreshold: number };
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { requests?: Record<string, string> };
}
interface ComposeService {
  image?: string;
  command?: string[];
  read_only?: boolean;
  environment?: Record<string, string | number>;
  profiles?: string[];
}

/** Parses every document of one YAML text; a syntax error fails with the file's name. */
function parseManifests(file: string, text: string): Manifest[] {
  return parseAllDocuments(text).map((document) => {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
    return document.toJSON() as Manifest;
  });
}

/** Throws unless the document is of a known kind and valid against that kind's schema. */
function validateManifest(manifest: Manifest): void {
  const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
  if (!Model) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind}`);
  new Model(manifest as never).validate();
}

interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
  topologySpreadConstraints?: {
    topologyKey: string;
    whenUnsatisfiable: string;
    labelSelector: { matchLabels: Record<string, string> };
  }[];
}
/** The longest the shutdown steps after the drain may take: the HTTP close's 5 s grace, then the pools and consumers. */
const SHUTDOWN_STEPS_SECONDS = 15;
const podOf = (manifest: Manifest) => (manifest.spec as { template: { spec: PodSpec } }).template.spec;

/** The one container of a Deployment or Job. */
function containerOf(manifest: Manifest): Container {
  const pod = podOf(manifest);
  expect(pod.containers, manifest.metadata.name).to.have.length(1);
  return pod.containers[0] as Container;
}

/** Every container of a Deployment or Job, its init containers first. */
const allContainersOf = (manifest: Manifest): Container[] => [
  ...(podOf(manifest).initContainers ?? []),
  containerOf(manifest),
];

/** RFC 1918's ranges: where an ingress controller or a load balancer inside the cluster connects from. */
const PRIVATE_IPV4: [base: string, bits: number][] = [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
];

/** An IPv4 address or subnet (`10.244.0.0/16`) that lies wholly inside one of RFC 1918's ranges. */
function isPrivateIPv4Range(entry: string): boolean {
  const [address = '', prefix = '32'] = entry.split('/');
  const bits = Number(prefix);
  if (!isIPv4(address) || !Number.isInteger(bits) || bits > 32) return false;
  const value = (ip: string) => ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const network = (ip: string, width: number) => Math.floor(value(ip) / 2 ** (32 - width));
  return PRIVATE_IPV4.some(
    ([base, width]) => bits >= width && network(address, width) === network(base, width),
  );
}

/** IDENTITY, WEBHOOK_INGEST…: the prefix of a service's password variables. */
const variablePrefix = (service: string) => service.toUpperCase().replaceAll('-', '_');

/** Each $(VAR) in a value expands only variables defined earlier in the same container's list. */
function expectExpansionsDefinedEarlier(env: EnvVar[], label: string): void {
  for (const variable of env) {
    for (const [, reference] of (variable.value ?? '').matchAll(/\$\((\w+)\)/g)) {
      expect(
        env.findIndex((v) => v.name === reference),
        `${label} ${reference}`,
      ).to.be.within(0, env.indexOf(variable) - 1);
    }
  }
}

describe('Kubernetes manifests (infra/k8s) are valid and follow docker-compose.yml', () => {
  let manifests: Manifest[];
  let compose: Record<string, ComposeService>;
  let files: string[];

  before(async () => {
    files = (await readdir(K8S))
      .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
      .sort();
    manifests = [];
    for (const file of files)
      manifests.push(...parseManifests(file, await readFile(path.join(K8S, file), 'utf8')));
    compose = (
      parse(await readFile(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
        services: Record<string, ComposeService>;
      }
    ).services;
  });

  const named = (kind: string, name: string) =>
    manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
  /**
   * Compose's application services that run in production: everything built from the Dockerfile, less the sandbox
   * and the one-shots (the provisioner and the migrations, which name their command; the services run the image's).
   */
  const appServices = () =>
    Object.entries(compose).filter(
      ([, service]) => service.image?.includes('payments') && !service.profiles && !service.command,
    );

  it('lists every manifest file in kustomization.yaml', async () => {
    const kustomization = parse(await readFile(path.join(K8S, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
    };
    expect([...kustomization.resources].sort()).to.deep.equal(files);
  });

  it('validates every document against its kind’s Kubernetes schema, in the payments namespace', () => {
    expect(manifests.length).to.be.greaterThan(20);
    for (const manifest of manifests) {
      expect(() => validateManifest(manifest), `${manifest.kind} ${manifest.metadata.name}`).not.to.throw();
      if (manifest.kind !== 'Namespace')
        expect(manifest.metadata.namespace, manifest.metadata.name).to.equal('payments');
    }
  });

  it('rejects a broken manifest (the check can fail)', () => {
    const deployment = structuredClone(named('Deployment', 'ledger')) as Manifest;
    (deployment.spec as { replicas: unknown }).replicas = 'two';
    expect(() => validateManifest(deployment)).to.throw(/replicas/);
    const misspelt = structuredClone(named('Deployment', 'ledger')) as Manifest;
    delete (misspelt.spec as { selector?: unknown }).selector;
    expect(() => validateManifest(misspelt)).to.throw(/selector/);
    const monitor = structuredClone(named('ServiceMonitor', 'payments')) as Manifest;
    (monitor.spec as { endpoints: unknown }).endpoints = 'http';
    expect(() => validateManifest(monitor)).to.throw(/endpoints/);
    expect(() => validateManifest({ ...misspelt, kind: 'Deployement' })).to.throw(/no schema/);
    expect(() => parseManifests('broken.yaml', 'kind: [Deployment\n')).to.throw(/broken\.yaml/);
  });

  it('runs each compose service as a Deployment with its image, environment, probes, non-root and read-only', () => {
    expect(appServices().map(([name]) => name)).to.have.members([
      'identity',
      'ledger',
      'currency',
      'webhook-ingest',
      'webhook-delivery',
      'gateway',
    ]);
    for (const [name, service] of appServices()) {
      const deployment = named('Deployment', name);
      expect(deployment, name).to.not.equal(undefined);
      const container = containerOf(deployment as Manifest);
      expect(container.image).to.equal(`payments-${name}:latest`);
      const envNames = container.env.map((variable) => variable.name);
      expect(envNames, name).to.include.members(Object.keys(service.environment ?? {}));
      expect(service.read_only, name).to.equal(true);
      expect(container.securityContext).to.include({
        runAsNonRoot: true,
        runAsUser: 10001,
        readOnlyRootFilesystem: true,
      });
      if (name === 'gateway') {
        // Its /ready wants the service credential: an exec probe sends it.
        const probe = container.readinessProbe?.exec?.command.join(' ') ?? '';
        expect(probe)
          .to.match(/127\.0\.0\.1:8080\/ready/)
          .and.to.match(/Bearer .*process\.env\.SERVICE_TOKEN/);
      } else {
        expect(container.readinessProbe?.httpGet?.path, name).to.equal('/ready');
      }
      expect(container.livenessProbe?.httpGet.path, name).to.equal('/health');
      expect(container.resources?.requests, name).to.have.keys('cpu', 'memory');
      const port = String(service.environment?.PORT);
      expect(container.env.find((variable) => variable.name === 'PORT')?.value).to.equal(port);
      expect(named('Service', name), name).to.not.equal(undefined);
      expect(named('PodDisruptionBudget', name), name).to.not.equal(undefined);
    }
  });

  it('takes every secret from the Secret, whose keys are the .env variables compose requires', async () => {
    const secret = named('Secret', 'payments-secrets') as Manifest;
    expect(
      Object.values(secret.stringData ?? {}).every((value) => value === ''),
      'no real values',
    ).to.equal(true);
    const composeText = await readFile(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    const required = new Set([...composeText.matchAll(/\$\{(\w+):\?/g)].map((match) => match[1] as string));
    // Secrets compose leaves optional (`${STRIPE_SECRET_KEY:-}`) are optional references here too.
    const optional = new Set([...composeText.matchAll(/\$\{(\w+):-\}/g)].map((match) => match[1] as string));
    const workloads = manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'Job');
    const optionalReferences = workloads.flatMap((manifest) =>
      allContainersOf(manifest).flatMap((container) =>
        container.env.flatMap((variable) =>
          variable.valueFrom?.secretKeyRef?.optional ? [variable.valueFrom.secretKeyRef.key] : [],
        ),
      ),
    );
    expect(Object.keys(secret.stringData ?? {})).to.have.members([
      ...required,
      ...new Set(optionalReferences),
    ]);
    // Both database roles' passwords of each service with a database.
    for (const name of WITH_DATABASE)
      expect(secret.stringData).to.include.keys(
        `${variablePrefix(name)}_DATABASE_PASSWORD`,
        `${variablePrefix(name)}_DATABASE_OWNER_PASSWORD`,
      );
    for (const manifest of workloads) {
      for (const variable of allContainersOf(manifest).flatMap((container) => container.env)) {
        const reference = variable.valueFrom?.secretKeyRef;
        if (reference)
          expect(
            required.has(reference.key) || (reference.optional === true && optional.has(reference.key)),
            `${manifest.metadata.name} ${reference.key}`,
          ).to.equal(true);
        // Secrets never sit in plain values: URLs interpolate them with $(VAR).
        if (variable.value && /PASSWORD|TOKEN|SECRET|KEY/.test(variable.name))
          expect.fail(`${variable.name} in plain text`);
      }
      expect(
        containerOf(manifest).env.some((v) => v.name === 'SERVICE_TOKEN') || manifest.kind === 'Job',
      ).to.equal(true);
    }
  });

  it('logs each service in as its own runtime database role and broker user, and runs provision as compose does', () => {
    for (const [name] of appServices()) {
      const env = containerOf(named('Deployment', name) as Manifest).env;
      const amqp = env.find((variable) => variable.name === 'AMQP_URL')?.value;
      expect(amqp, name).to.match(
        new RegExp(`^amqp://${name}:\\$\\(${variablePrefix(name)}_AMQP_PASSWORD\\)@`),
      );
      const database = env.find((variable) => variable.name === 'DATABASE_URL')?.value;
      if (name === 'gateway') expect(database).to.equal(undefined);
      else
        expect(database, name).to.equal(
          `postgres://${databaseOf(name)}_runtime:$(${variablePrefix(name)}_DATABASE_PASSWORD)` +
            `@$(POSTGRES_HOST):5432/${databaseOf(name)}`,
        );
      // Never the owner's credential: no migration URL, no owner password by any name.
      expect(JSON.stringify(env), name).not.to.match(/MIGRATION_DATABASE_URL|_OWNER_PASSWORD/);
      expectExpansionsDefinedEarlier(env, name);
    }
    const provision = containerOf(named('Job', 'provision') as Manifest);
    expect(provision.image).to.equal('payments-provision:latest');
    expect(provision.command).to.deep.equal(compose.provision?.command);
    expect(provision.env.map((variable) => variable.name)).to.include.members(
      Object.keys(compose.provision?.environment ?? {}),
    );
    // No sandbox runs here: the Job declares no queue for it and removes one an earlier deployment left.
    expect(provision.env.find((variable) => variable.name === 'SANDBOX_DEPLOYED')?.value).to.equal('false');
    expect(provision.securityContext).to.include({ runAsUser: 10001, readOnlyRootFilesystem: true });
    // It makes both roles of each database.
    for (const name of WITH_DATABASE)
      for (const suffix of ['DATABASE_PASSWORD', 'DATABASE_OWNER_PASSWORD']) {
        const variable = `${variablePrefix(name)}_${suffix}`;
        expect(
          provision.env.find((v) => v.name === variable)?.valueFrom?.secretKeyRef,
          variable,
        ).to.deep.equal({
          name: 'payments-secrets',
          key: variable,
        });
      }
  });

  it('migrates each database as its owner in an init container, as compose’s one-shot does, before the service starts', () => {
    for (const [name] of appServices()) {
      const deployment = named('Deployment', name) as Manifest;
      const inits = podOf(deployment).initContainers ?? [];
      const migrate = compose[`${name}-migrate`];
      if (!WITH_DATABASE.includes(name)) {
        expect([migrate, inits], name).to.deep.equal([undefined, []]);
        continue;
      }
      expect(migrate, name).to.not.equal(undefined);
      expect(inits, name).to.have.length(1);
      const init = inits[0] as Container;
      const main = containerOf(deployment);
      expect(init.image, name).to.equal(main.image);
      expect(init.command, name).to.deep.equal(['node', 'dist/migrate.js']);
      expect(init.command, name).to.deep.equal(migrate?.command);
      expect(init.securityContext, name).to.deep.equal(main.securityContext);
      expect(init.resources?.requests, name).to.have.keys('cpu', 'memory');
      expect(
        init.env.map((variable) => variable.name),
        name,
      ).to.include.members(Object.keys(migrate?.environment ?? {}));
      const value = (variable: string) => init.env.find((v) => v.name === variable)?.value;
      expect(value('NODE_ENV'), name).to.equal('production');
      // It grants the service's runtime role its privileges, and migrates as the owner.
      expect(value('DATABASE_URL'), name).to.equal(main.env.find((v) => v.name === 'DATABASE_URL')?.value);
      const owner = `${variablePrefix(name)}_DATABASE_OWNER_PASSWORD`;
      expect(value('MIGRATION_DATABASE_URL'), name).to.equal(
        `postgres://${databaseOf(name)}:$(${owner})@$(POSTGRES_HOST):5432/${databaseOf(name)}`,
      );
      expect(init.env.find((v) => v.name === owner)?.valueFrom?.secretKeyRef, name).to.deep.equal({
        name: 'payments-secrets',
        key: owner,
      });
      // Its own database only: no broker, no service token, no administrator.
      expect(JSON.stringify(init.env), name).not.to.match(/AMQP|SERVICE_TOKEN|POSTGRES_PASSWORD/);
      expectExpansionsDefinedEarlier(init.env, `${name} migrate`);
    }
  });

  it('has the gateway believe X-Forwarded-For from the ingress in front of it: set, and to private ranges only', () => {
    const gateway = containerOf(named('Deployment', 'gateway') as Manifest);
    expect(gateway.env.find((variable) => variable.name === 'TRUSTED_PROXIES')?.valueFrom).to.deep.equal({
      configMapKeyRef: { name: 'payments-config', key: 'GATEWAY_TRUSTED_PROXIES' },
    });
    const config = named('ConfigMap', 'payments-config') as Manifest & { data: Record<string, string> };
    // Empty, every client behind the Ingress would be its one address, and share every per-address limit.
    const trusted = (config.data.GATEWAY_TRUSTED_PROXIES ?? '').split(',').map((entry) => entry.trim());
    expect(trusted, 'GATEWAY_TRUSTED_PROXIES').to.not.deep.equal(['']);
    for (const entry of trusted) expect(isPrivateIPv4Range(entry), entry).to.equal(true);
    // The check can fail.
    for (const entry of ['', '0.0.0.0/0', '10.0.0.0/7', '203.0.113.0/24', 'loopback'])
      expect(isPrivateIPv4Range(entry), entry).to.equal(false);
  });

  it('drains each service on a rollout: startup probe, preStop, then SHUTDOWN_DRAIN_SECONDS within the grace period', () => {
    for (const [name] of appServices()) {
      const deployment = named('Deployment', name) as Manifest;
      const container = containerOf(deployment);
      expect(container.startupProbe?.httpGet?.path, name).to.equal('/health');
      const startup = container.startupProbe as { periodSeconds: number; failureThreshold: number };
      expect(startup.periodSeconds * startup.failureThreshold, name).to.be.at.least(60);
      expect(container.livenessProbe?.initialDelaySeconds, name).to.equal(undefined);
      const [sleep, seconds] = container.lifecycle?.preStop?.exec?.command ?? [];
      expect(sleep, name).to.equal('sleep');
      const preStop = Number(seconds);
      expect(preStop, name).to.be.within(2, 15);
      const drain = Number(container.env.find((v) => v.name === 'SHUTDOWN_DRAIN_SECONDS')?.value);
      expect(drain, name).to.be.within(5, 60);
      expect(podOf(deployment).terminationGracePeriodSeconds, name).to.be.above(
        preStop + drain + SHUTDOWN_STEPS_SECONDS,
      );
    }
  });

  it('spreads each service over nodes (strictly) and zones (where it can)', () => {
    for (const [name] of appServices()) {
      const constraints = podOf(named('Deployment', name) as Manifest).topologySpreadConstraints ?? [];
      const byKey = Object.fromEntries(constraints.map((c) => [c.topologyKey, c]));
      expect(byKey['kubernetes.io/hostname']?.whenUnsatisfiable, name).to.equal('DoNotSchedule');
      // A cluster without zone labels must still schedule.
      expect(byKey['topology.kubernetes.io/zone']?.whenUnsatisfiable, name).to.equal('ScheduleAnyway');
      for (const constraint of constraints)
        expect(constraint.labelSelector.matchLabels, name).to.deep.equal({ 'app.kubernetes.io/name': name });
    }
  });

  it('autoscales every service from two replicas, and lets only the gateway in from outside', () => {
    for (const [name] of appServices()) {
      const hpa = named('HorizontalPodAutoscaler', name) as Manifest;
      expect(hpa, name).to.not.equal(undefined);
      const spec = hpa.spec as { scaleTargetRef: { name: string }; minReplicas: number };
      expect(spec.scaleTargetRef.name).to.equal(name);
      expect(spec.minReplicas, name).to.be.at.least(2);
    }
    const policies = manifests.filter((manifest) => manifest.kind === 'NetworkPolicy');
    const deny = policies.find((policy) => policy.metadata.name === 'default-deny-ingress') as Manifest;
    expect(deny.spec).to.deep.include({ podSelector: {}, policyTypes: ['Ingress'] });
    // Only the gateway's policy admits traffic without a `from` (i.e. from anywhere).
    const open = policies.filter((policy) =>
      ((policy.spec as { ingress?: { from?: unknown[] }[] }).ingress ?? []).some((rule) => !rule.from),
    );
    expect(open.map((policy) => policy.spec?.podSelector)).to.deep.equal([
      { matchLabels: { 'app.kubernetes.io/name': 'gateway' } },
    ]);
  });

  it('scrapes every application Service’s /metrics with a Bearer token from a Secret, past default-deny', () => {
    const monitor = named('ServiceMonitor', 'payments') as Manifest;
    const spec = monitor.spec as {
      jobLabel: string;
      selector: { matchLabels: Record<string, string> };
      endpoints: {
        port: string;
        path: string;
        authorization: { credentials: { name: string; key: string } };
      }[];
    };
    const endpoint = spec.endpoints[0];
    expect(endpoint).to.include({ port: 'http', path: '/metrics' });
    const secret = named('Secret', endpoint?.authorization.credentials.name ?? '') as Manifest;
    expect(secret.stringData).to.have.key(String(endpoint?.authorization.credentials.key));
    const services = manifests.filter((manifest) => manifest.kind === 'Service');
    for (const [name] of appServices()) {
      const service = services.find((manifest) => manifest.metadata.name === name) as Manifest & {
        metadata: { labels: Record<string, string> };
      };
      expect(service.metadata.labels, name).to.include(spec.selector.matchLabels);
      // The rules ask for job="payments", as compose's scrape job is named.
      expect(service.metadata.labels[spec.jobLabel], name).to.equal('payments');
      const ports = (service.spec as { ports: { name: string; port: number }[] }).ports;
      expect(
        ports.map((port) => port.name),
        name,
      ).to.include('http');
      const admitted = manifests.some(
        (policy) =>
          policy.kind === 'NetworkPolicy' &&
          JSON.stringify(policy.spec).includes('namespaceSelector') &&
          JSON.stringify(policy.spec).includes(`{"port":${ports[0]?.port}}`),
      );
      expect(admitted, `${name} scrapeable from the monitoring namespace`).to.equal(true);
    }
  });
});
