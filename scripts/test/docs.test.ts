import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import GithubSlugger from 'github-slugger';
import MarkdownIt, { type Token } from 'markdown-it';
import { parse as parseShell, type ParseEntry } from 'shell-quote';

// The documentation's promises a reader acts on: every relative link leads somewhere, every command the README's
// quick start and "try it" show exists, and nothing speaks of rounds of work instead of dates and commits.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const markdown = new MarkdownIt({ html: true });

/** Files in the checkout (tracked, or new and not ignored), as paths from its root. */
function checkoutFiles(...patterns: string[]): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...patterns], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((file) => file !== '' && existsSync(path.join(ROOT, file)));
}

const tokensOf = (file: string): Token[] => markdown.parse(readFileSync(path.join(ROOT, file), 'utf8'), {});

/** The heading anchors GitHub makes for a Markdown file. */
function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const tokens = tokensOf(file);
  const anchors = new Set<string>();
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const text = (tokens[i + 1]?.children ?? [])
      .filter((child) => child.type === 'text' || child.type === 'code_inline')
      .map((child) => child.content)
      .join('');
    anchors.add(slugger.slug(text));
  });
  return anchors;
}

/** Every link and image target in a Markdown file. */
function linksOf(file: string): string[] {
  return tokensOf(file)
    .flatMap((token) => token.children ?? [])
    .flatMap((child) => {
      if (child.type === 'link_open') return [String(child.attrGet('href') ?? '')];
      if (child.type === 'image') return [String(child.attrGet('src') ?? '')];
      return [];
    });
}

/** Why a relative link does not resolve, or undefined when it does. */
function brokenLink(file: string, href: string): string | undefined {
  const [target = '', anchor] = href.split('#');
  const resolved =
    target === '' ? path.join(ROOT, file) : path.resolve(ROOT, path.dirname(file), decodeURI(target));
  if (!existsSync(resolved)) return `${href}: no such file`;
  if (anchor && resolved.endsWith('.md') && statSync(resolved).isFile()) {
    if (!anchorsOf(path.relative(ROOT, resolved)).has(decodeURIComponent(anchor)))
      return `${href}: no heading with that anchor`;
  }
  return undefined;
}

describe('documentation', function () {
  this.timeout(60_000);
  const documents = checkoutFiles('*.md');

  it('finds the Markdown files it checks', () => {
    expect(documents).to.include.members(['README.md', 'docs/configuration.md', 'cli/README.md']);
  });

  it('has every relative link resolve to a file, and every anchor to a heading', () => {
    const broken = documents.flatMap((file) =>
      linksOf(file)
        .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href))
        .flatMap((href) => {
          const why = brokenLink(file, href);
          return why ? [`${file}: ${why}`] : [];
        }),
    );
    expect(
      broken,
      'broken links (the contract documents ../shared/*.md live beside the checkout)',
    ).to.deep.equal([]);
  });

  it('speaks of dates and commits, never of rounds of work', () => {
    const ordinal =
      '(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|' +
      'last|previous|earlier|next|later|\\d+(?:st|nd|rd|th))';
    const rounds = new RegExp(
      `\\b(?:${ordinal} (?:session|round|milestone)|this round|issue #?\\d+|the issue(?:'|’)s|steering)\\b|\\(item \\d+\\)`,
      'i',
    );
    const texts = checkoutFiles(
      '*.md',
      '*.ts',
      '*.sh',
      '*.yml',
      '*.yaml',
      '*.json',
      'Dockerfile*',
      '.ci/*',
    ).filter((file) => file !== 'scripts/test/docs.test.ts');
    const found = texts.flatMap((file) =>
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          rounds.test(line) && !line.includes('rounds-of-work-ok')
            ? [`${file}:${i + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(found).to.deep.equal([]);
  });

  describe("the README's quick start and try it", () => {
    const scripts = Object.keys(
      (
        JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
          scripts: Record<string, string>;
        }
      ).scripts,
    );
    const commands = readmeCommands();

    it('shows commands', () => {
      expect(commands.length).to.be.greaterThan(5);
    });

    it('names only scripts, CLI commands and programs a machine with Node and npm has', () => {
      const problems = commands.flatMap((line) =>
        simpleCommands(line).flatMap((words) => problemsOf(words, scripts)),
      );
      expect(problems).to.deep.equal([]);
    });
  });
});

/** The command lines in the README's `## Quick start` and `## Try it` code blocks. */
function readmeCommands(): string[] {
  const tokens = tokensOf('README.md');
  let section = '';
  const lines: string[] = [];
  tokens.forEach((token, i) => {
    if (token.type === 'heading_open' && token.tag === 'h2') section = tokens[i + 1]?.content ?? '';
    if (token.type !== 'fence' || !['Quick start', 'Try it'].includes(section)) return;
    if (!['sh', 'bash', 'shell', 'console'].includes(token.info.trim())) return;
    const console = token.info.trim() === 'console';
    const joined = token.content.replace(/\\\n/g, ' ');
    for (const line of joined.split('\n')) {
      if (console) {
        if (line.startsWith('$ ')) lines.push(line.slice(2));
      } else if (line.trim() !== '' && !line.trim().startsWith('#')) lines.push(line);
    }
  });
  return lines;
}

/** A command line as its simple commands (split at `&&`, `||`, `;`, `|`), each as words; `$(…)` taken apart too. */
function simpleCommands(line: string): string[][] {
  const substitutions = [...line.matchAll(/\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)/g)].map(
    (match) => match[1] ?? '',
  );
  const outer = line.replace(/\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)/g, 'SUBSTITUTED');
  const entries: ParseEntry[] = parseShell(outer, (name) => `$${name}`);
  const commands: string[][] = [[]];
  for (const entry of entries) {
    if (typeof entry === 'string') commands.at(-1)!.push(entry);
    else if ('comment' in entry) break;
    else if ('op' in entry && ['&&', '||', ';', '|'].includes(entry.op)) commands.push([]);
  }
  return [...commands.filter((words) => words.length > 0), ...substitutions.flatMap(simpleCommands)];
}

const FRESH_MACHINE_PROGRAMS = new Set([
  'curl',
  'alias',
  'export',
  'cd',
  'echo',
  'cat',
  'printf',
  'sleep',
  'node',
  'npm',
]);

/** What is wrong with one simple command: a script, CLI command or program that does not exist. */
function problemsOf(command: string[], scripts: string[]): string[] {
  const first = command.findIndex((word) => !/^\w+=/.test(word));
  if (first === -1) return [];
  const [program = '', ...args] = command.slice(first);
  const show = command.join(' ');
  if (program === 'npx') {
    const rest = args.filter((arg) => arg !== '--yes' && arg !== '-y');
    if (!/^pnpm(@[\d.]+)?$/.test(rest[0] ?? '')) return [`${show}: npx runs only the project's pnpm here`];
    return problemsOfPnpm(rest.slice(1), scripts, show);
  }
  if (program === 'pnpm') return problemsOfPnpm(args, scripts, show);
  if (program === 'payments') return problemsOfCli(args, show);
  if (program === 'node' && args[0] === 'cli/bin/payments.js') return problemsOfCli(args.slice(1), show);
  if (program === 'node' && args[0] && !args[0].startsWith('-') && !existsSync(path.join(ROOT, args[0])))
    return [`${show}: no file ${args[0]}`];
  if (program === 'bash' || program === 'sh')
    return args[0] && existsSync(path.join(ROOT, args[0])) ? [] : [`${show}: no script ${args[0]}`];
  if (!FRESH_MACHINE_PROGRAMS.has(program))
    return [
      `${show}: ${program} is not a script, a CLI command or a program a machine with Node and npm has`,
    ];
  return [];
}

function problemsOfPnpm(args: string[], scripts: string[], show: string): string[] {
  const [script] = args.filter((arg) => !arg.startsWith('-'));
  if (script === undefined || script === 'install') return [];
  return scripts.includes(script) ? [] : [`${show}: no script "${script}" in package.json`];
}

/** The CLI's commands at each level, read from its own help, as a user would find them. */
function problemsOfCli(args: string[], show: string): string[] {
  const words: string[] = [];
  for (const word of args) {
    if (word.startsWith('-')) break;
    const known = cliCommandsUnder(words);
    if (known.length === 0) break;
    if (!known.includes(word)) return [`${show}: no CLI command "payments ${[...words, word].join(' ')}"`];
    words.push(word);
  }
  return words.length > 0 ? [] : [`${show}: no CLI command given`];
}

const helpCache = new Map<string, string[]>();
function cliCommandsUnder(prefix: string[]): string[] {
  const key = prefix.join(' ');
  const cached = helpCache.get(key);
  if (cached) return cached;
  const help = execFileSync(process.execPath, ['cli/bin/payments.js', ...prefix, '--help'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const commandsSection = help.split(/\n\s*\n/).find((block) => block.startsWith('Commands:')) ?? '';
  const lead = ['payments', ...prefix].join(' ') + ' ';
  const names = commandsSection
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith(lead))
    .map((line) => line.slice(lead.length).split(/\s+/)[0] ?? '');
  helpCache.set(key, names);
  return names;
}
