/**
 * The two descriptions of the operator's image, read for the tests that hold them together: the
 * Dockerfile's runtime stage (what `docker build` makes) and scripts/image-config.json (the config that
 * `npm run image` writes into its archive). Both tests read the same files through these helpers, so the
 * unit test (the descriptions agree) and the end-to-end one (the archive is what they describe) cannot
 * drift apart.
 */
import { readFileSync } from 'node:fs';
import { dirname, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: this file runs as dist/test/support/image.js. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const read = (p: string): string => readFileSync(resolve(ROOT, p), 'utf8');

/** The OCI image config fields the Dockerfile sets (the `config` object of an image config blob). */
export interface ImageConfig {
  User?: string;
  ExposedPorts?: Record<string, Record<string, never>>;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
}

/** One instruction of a Dockerfile: its keyword in capitals and the rest of its (joined) line. */
export interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions in order, continuation lines joined, comments and blank lines dropped. */
export function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' ';
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    const m = /^(\S+)\s*(.*)$/.exec(whole);
    if (m) out.push({ keyword: m[1]!.toUpperCase(), args: m[2]!.trim() });
  }
  return out;
}

/** The instructions of the last stage, the one the image is made of (FROM included). */
export function runtimeStage(text: string): Instruction[] {
  const all = instructions(text);
  const from = all.map((i) => i.keyword).lastIndexOf('FROM');
  return all.slice(from);
}

const unquote = (s: string): string => (/^".*"$/.test(s) ? s.slice(1, -1) : s);

/** An exec-form array (`["a", "b"]`); the shell form would need a shell, which the image has not. */
function execForm(keyword: string, args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) throw new Error(`${keyword} is not in exec form: ${args}`);
  return parsed;
}

/** ENV's `K=V K2="V 2"` pairs, or the older `ENV K V` form. */
function envPairs(args: string): string[] {
  if (!/^[^\s=]+=/.test(args)) {
    const m = /^(\S+)\s+(.*)$/.exec(args);
    return m ? [`${m[1]}=${m[2]}`] : [];
  }
  return [...args.matchAll(/([^\s=]+)=("[^"]*"|\S*)/g)].map((m) => `${m[1]}=${unquote(m[2]!)}`);
}

/** The config the runtime stage's instructions set, in the OCI image config's terms. */
export function dockerfileConfig(text: string): ImageConfig {
  const config: ImageConfig = {};
  for (const { keyword, args } of runtimeStage(text)) {
    if (keyword === 'USER') config.User = args;
    else if (keyword === 'WORKDIR') config.WorkingDir = posix.resolve(config.WorkingDir ?? '/', args);
    else if (keyword === 'ENV') config.Env = [...(config.Env ?? []), ...envPairs(args)];
    else if (keyword === 'ENTRYPOINT') config.Entrypoint = execForm(keyword, args);
    else if (keyword === 'CMD') config.Cmd = execForm(keyword, args);
    else if (keyword === 'EXPOSE') {
      const ports = args.split(/\s+/).map((p) => (p.includes('/') ? p : `${p}/tcp`));
      config.ExposedPorts = { ...config.ExposedPorts, ...Object.fromEntries(ports.map((p) => [p, {}])) };
    }
  }
  return config;
}

/** What the runtime stage copies into the image: each source's name and the absolute destination. */
export function runtimeCopies(text: string): Array<{ name: string; dest: string }> {
  let workdir = '/';
  const out: Array<{ name: string; dest: string }> = [];
  for (const { keyword, args } of runtimeStage(text)) {
    if (keyword === 'WORKDIR') workdir = posix.resolve(workdir, args);
    if (keyword !== 'COPY') continue;
    const words = args.split(/\s+/).filter((w) => !w.startsWith('--'));
    const dest = words.pop()!;
    for (const src of words) {
      const name = posix.basename(src);
      out.push({ name, dest: dest.endsWith('/') ? posix.resolve(workdir, dest, name) : posix.resolve(workdir, dest) });
    }
  }
  return out;
}

/** scripts/image-config.json: the config `npm run image` writes, compacted, into its archive. */
export const imageConfig = (): ImageConfig => JSON.parse(read('scripts/image-config.json')) as ImageConfig;

/** The Node version scripts/node24.sh pins, which the image ships. */
export function pinnedNode(): string {
  const m = /RG_NODE24_VERSION:-(\d+\.\d+\.\d+)\}/.exec(read('scripts/node24.sh'));
  if (!m) throw new Error('scripts/node24.sh pins no version');
  return m[1]!;
}
