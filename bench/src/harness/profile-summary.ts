import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Wall time covered by the profile, ms. */
  wallMs: number;
  /** Time the main thread was running JavaScript or native code (not idle), ms, loading modules excluded. */
  busyMs: number;
  /** Time spent loading and evaluating modules (start-up: tsx transpiling, schemas compiled at import), ms. */
  startupMs: number;
  /** Self time by function, largest first. */
  top: { name: string; selfMs: number; share: number }[];
  /** Self time by package or area (node_modules package, node internals, the service's own code). */
  byArea: { area: string; selfMs: number; share: number }[];
}

const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);
/** Frames of module loading and evaluation: everything under one is start-up, not the load the bench applies. */
const MODULE_LOADING = /^node:internal\/modules\/|\/node_modules\/\.pnpm\/tsx@/;

function areaOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'garbage collection';
  if (!url) return name.startsWith('(') ? name : 'native';
  const pnpm = /node_modules\/\.pnpm\/([^/]+)\//.exec(url);
  if (pnpm) return (pnpm[1] as string).replace(/@[^@]*$/, '').replace('+', '/');
  if (url.startsWith('node:')) return 'node internals';
  const workspace = /\/work\/[^/]+\/(packages\/[^/]+|services\/[^/]+|gateway)\//.exec(url);
  return workspace ? (workspace[1] as string) : url;
}

/** Reads a .cpuprofile and says where the time went. */
export async function summarizeProfile(file: string, topN = 15): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  // Nodes at or under a module-loading frame.
  const loading = new Set<number>();
  const markLoading = (id: number) => {
    loading.add(id);
    for (const child of nodes.get(id)?.children ?? []) if (!loading.has(child)) markLoading(child);
  };
  for (const node of profile.nodes)
    if (!loading.has(node.id) && MODULE_LOADING.test(node.callFrame.url)) markLoading(node.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000);
  });
  const byName = new Map<string, number>();
  const byArea = new Map<string, number>();
  let busy = 0;
  let startup = 0;
  for (const [id, ms] of self) {
    const frame = (nodes.get(id) as ProfileNode).callFrame;
    if (frame.functionName === '(idle)' || frame.functionName === '(program)') continue;
    if (loading.has(id)) {
      startup += ms;
      continue;
    }
    busy += ms;
    const file = frame.url.replace(/^.*node_modules\/\.pnpm\//, '').replace(/^file:\/\/\/work\/[^/]+\//, '');
    const name = IDLE.has(frame.functionName)
      ? frame.functionName
      : `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
    byName.set(name, (byName.get(name) ?? 0) + ms);
    const area = areaOf(frame.url, frame.functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + ms);
  }
  const ranked = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, topN);
  return {
    wallMs: (profile.endTime - profile.startTime) / 1000,
    busyMs: busy,
    startupMs: startup,
    top: ranked(byName).map(([name, selfMs]) => ({ name, selfMs, share: selfMs / busy })),
    byArea: ranked(byArea).map(([area, selfMs]) => ({ area, selfMs, share: selfMs / busy })),
  };
}
