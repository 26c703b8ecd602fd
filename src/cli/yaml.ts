/**
 * A YAML emitter for JSON data, for `--output yaml`: block style, two spaces per level, kubectl's look.
 * The `yaml` package is a development dependency only, and JSON data needs little of YAML: a string is
 * written plain when no YAML 1.1 or 1.2 reader could take it for anything but that string, else
 * double-quoted with escapes (a double-quoted scalar takes JSON's escapes, so a reader gets back exactly
 * the string). Keys are strings and follow the same rule. An undefined value is left out, as
 * JSON.stringify leaves it out; a number that is not finite is `null`, as in JSON.
 */

/** Words a YAML 1.1 reader (or 1.2's core schema) takes for a boolean or null, in any case. */
const SPECIAL_WORDS = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n', '~']);

/** A first character that makes YAML read an indicator (a sequence, an anchor, a tag, a flow, a quote…). */
const LEADING_INDICATOR = /^[-?:,[\]{}#&*!|>'"%@`<=]/;

/** A start that a reader may take for a number, a date or a time (`1e3`, `.5`, `+1`, `2024-01-01`, `.inf`). */
const NUMBER_LIKE = /^[-+]?(?:\.?[0-9]|\.(?:inf|nan)$)/i;

/** A code point allowed in a plain scalar: printable, and not one that readers treat as a break or a BOM. */
function plainCodePoint(c: number): boolean {
  if (c >= 0x20 && c <= 0x7e) return true;
  if (c < 0xa0) return false;
  if (c === 0xfeff || c === 0x2028 || c === 0x2029 || c === 0xfffe || c === 0xffff) return false;
  return c < 0xd800 || c > 0xdfff;
}

/** Whether `s` can be written as a plain scalar and read back as the same string. */
export function plainSafe(s: string): boolean {
  if (s === '' || /^\s|\s$/.test(s)) return false;
  if (SPECIAL_WORDS.has(s.toLowerCase())) return false;
  if (LEADING_INDICATOR.test(s) || NUMBER_LIKE.test(s)) return false;
  // A mapping value indicator, a comment, or a document marker.
  if (s.includes(': ') || s.endsWith(':') || s.includes(' #') || s.startsWith('...')) return false;
  for (const ch of s) if (!plainCodePoint(ch.codePointAt(0) ?? 0)) return false;
  return true;
}

const ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `s` double-quoted, with every character that is not printable (or is a lone surrogate) escaped. */
export function doubleQuoted(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    const esc = ESCAPES[ch];
    if (esc) out += esc;
    else if (c >= 0x20 && c !== 0x7f && plainOrWide(c)) out += ch;
    else out += `\\u${c.toString(16).padStart(4, '0')}`;
  }
  return `${out}"`;
}

/** Inside double quotes: the printable code points of {@link plainCodePoint}, and the ASCII ones. */
function plainOrWide(c: number): boolean {
  return c <= 0x7e || plainCodePoint(c);
}

function str(s: string): string {
  return plainSafe(s) ? s : doubleQuoted(s);
}

type Entry = [key: string, value: unknown];

function entries(v: object): Entry[] {
  return Object.entries(v).filter(([, x]) => x !== undefined);
}

/** A non-empty array or object: written as a block under its key or dash. */
function isBlock(v: unknown): v is object {
  if (Array.isArray(v)) return v.length > 0;
  return typeof v === 'object' && v !== null && entries(v).length > 0;
}

/** A value written on one line: a scalar, `{}` or `[]`. */
function inline(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return Number.isFinite(v) ? (Object.is(v, -0) ? '-0' : String(v)) : 'null';
  if (typeof v === 'string') return str(v);
  if (Array.isArray(v)) return '[]';
  if (typeof v === 'object') return '{}';
  // Not JSON data (a bigint, a function): written as JSON.stringify would fail to, as its string.
  return str(typeof v === 'bigint' ? v.toString() : 'null');
}

/** The lines of a block value, each indented by `indent` spaces. */
function blockLines(v: object, indent: number): string[] {
  const pad = ' '.repeat(indent);
  const out: string[] = [];
  if (Array.isArray(v)) {
    for (const item of v as unknown[]) {
      if (!isBlock(item)) {
        out.push(`${pad}- ${inline(item)}`);
        continue;
      }
      // The item's first line goes beside its dash; the rest keep the item's indentation.
      const sub = blockLines(item, indent + 2);
      out.push(`${pad}- ${(sub[0] ?? '').slice(indent + 2)}`, ...sub.slice(1));
    }
    return out;
  }
  for (const [k, x] of entries(v)) {
    if (isBlock(x)) out.push(`${pad}${str(k)}:`, ...blockLines(x, indent + 2));
    else out.push(`${pad}${str(k)}: ${inline(x)}`);
  }
  return out;
}

/** `value` (JSON data) as one YAML document, ending in a newline. */
export function emitYaml(value: unknown): string {
  return `${isBlock(value) ? blockLines(value, 0).join('\n') : inline(value)}\n`;
}
