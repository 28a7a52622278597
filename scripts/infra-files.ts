import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { INFRA_FILES } from '@payments/infra';

// `pnpm infra:files`: writes the RabbitMQ definitions and the PostgreSQL init script from the topology in
// packages/contracts and packages/infra, and the Kubernetes PrometheusRule from infra/monitoring/rules.yml; a test
// fails while the committed files differ from what this writes.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

for (const [file, render] of Object.entries(INFRA_FILES)) {
  await writeFile(path.join(ROOT, file), render());
  console.log(`wrote ${file}`);
}
