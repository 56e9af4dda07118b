// A strict JSON reader for untrusted headers (safetensors, checkpoint index files).
//
// Why not JSON.parse: it silently keeps the last of two equal keys (a safetensors header with a
// tensor named twice would lose one entry), turns every number into a double (a 2^64 offset would
// be rounded instead of rejected) and lets `__proto__` keys through as ordinary properties. This
// reader rejects duplicate keys at every level, keeps each number's literal text so callers can
// demand exact integers, limits nesting depth (so deeply nested input cannot exhaust the stack),
// and rejects lone surrogates in strings. It follows RFC 8259 otherwise.

/** A JSON number, kept as its literal text; `value` is the nearest double. */
export class JsonNumber {
  constructor(readonly text: string) {}
  get value(): number {
    return Number(this.text);
  }
  /** The value when the literal is an integer (no fraction, no exponent) within ±(2^53 - 1), else undefined. */
  safeInteger(): number | undefined {
    if (!/^-?(0|[1-9][0-9]*)$/.test(this.text)) return undefined;
    const v = Number(this.text);
    return Number.isSafeInteger(v) ? v : undefined;
  }
}

/** A JSON object: its members in document order, keys unique. */
export class JsonObject {
  readonly members = new Map<string, JsonValue>();
  get(key: string): JsonValue | undefined {
    return this.members.get(key);
  }
  has(key: string): boolean {
    return this.members.has(key);
  }
  keys(): string[] {
    return [...this.members.keys()];
  }
}

export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | JsonObject;

/** A syntax or structure fault, with the character offset where it was found. */
export class JsonSyntaxError extends Error {
  constructor(readonly fault: string, readonly position: number) {
    super(`${fault} at character ${position}`);
    this.name = 'JsonSyntaxError';
  }
}

/** The fault raised for a key that appears twice in one object. */
export class JsonDuplicateKeyError extends JsonSyntaxError {
  constructor(readonly key: string, position: number, readonly depth: number) {
    super(`duplicate key ${JSON.stringify(key)}`, position);
    this.name = 'JsonDuplicateKeyError';
  }
}

export interface StrictJsonOptions {
  /** Deepest nesting of arrays/objects accepted (the top-level value is depth 1). Default 64. */
  maxDepth?: number;
}

/** Parses a whole JSON text (surrounding JSON whitespace allowed) strictly; see the file comment. */
export function parseStrictJson(text: string, opts: StrictJsonOptions = {}): JsonValue {
  const p = new Parser(text, opts.maxDepth ?? 64);
  p.skipWhitespace();
  const value = p.value(0);
  p.skipWhitespace();
  if (p.pos !== text.length) p.fail('unexpected content after the JSON value');
  return value;
}

/** A type name for messages about JSON values. */
export function jsonTypeName(value: JsonValue | undefined): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return `boolean ${value}`;
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  if (value instanceof JsonNumber) return `number ${value.text.length > 40 ? value.text.slice(0, 40) + '…' : value.text}`;
  if (Array.isArray(value)) return `array of ${value.length}`;
  return 'object';
}

const WS_SPACE = 0x20;
const WS_TAB = 0x09;
const WS_LF = 0x0a;
const WS_CR = 0x0d;

class Parser {
  pos = 0;
  constructor(readonly text: string, readonly maxDepth: number) {}

  fail(fault: string, at = this.pos): never {
    throw new JsonSyntaxError(fault, at);
  }

  skipWhitespace(): void {
    const t = this.text;
    let i = this.pos;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === WS_SPACE || c === WS_TAB || c === WS_LF || c === WS_CR) i++;
      else break;
    }
    this.pos = i;
  }

  value(depth: number): JsonValue {
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case 0x7b: // {
        return this.object(depth + 1);
      case 0x5b: // [
        return this.array(depth + 1);
      case 0x22: // "
        return this.string();
      case 0x74: // t
        return this.literal('true', true);
      case 0x66: // f
        return this.literal('false', false);
      case 0x6e: // n
        return this.literal('null', null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
        if (Number.isNaN(c)) this.fail('unexpected end of JSON');
        this.fail(`unexpected character ${JSON.stringify(this.text[this.pos])}`);
    }
  }

  literal<T>(word: string, value: T): T {
    if (this.text.startsWith(word, this.pos)) {
      this.pos += word.length;
      return value;
    }
    this.fail('invalid literal');
  }

  enter(depth: number): void {
    if (depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth} levels`);
  }

  object(depth: number): JsonObject {
    this.enter(depth);
    const obj = new JsonObject();
    this.pos++; // {
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return obj;
    }
    for (;;) {
      if (this.text.charCodeAt(this.pos) !== 0x22) this.fail('expected a string key');
      const keyAt = this.pos;
      const key = this.string();
      if (obj.members.has(key)) throw new JsonDuplicateKeyError(key, keyAt, depth);
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail("expected ':' after a key");
      this.pos++;
      this.skipWhitespace();
      obj.members.set(key, this.value(depth));
      if (!this.more(0x7d, '}', 'object')) return obj;
    }
  }

  /** After a member or element: true at ',' (another follows), false past the closing bracket. */
  private more(close: number, closeChar: string, where: 'object' | 'array'): boolean {
    this.skipWhitespace();
    const c = this.text.charCodeAt(this.pos);
    if (c === 0x2c) {
      this.pos++;
      this.skipWhitespace();
      return true;
    }
    if (c === close) {
      this.pos++;
      return false;
    }
    return this.fail(Number.isNaN(c) ? `unexpected end of JSON inside an ${where}` : `expected ',' or '${closeChar}' in an ${where}`);
  }

  array(depth: number): JsonValue[] {
    this.enter(depth);
    const out: JsonValue[] = [];
    this.pos++; // [
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      if (!this.more(0x5d, ']', 'array')) return out;
    }
  }

  number(): JsonNumber {
    const m = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    m.lastIndex = this.pos;
    const hit = m.exec(this.text);
    if (!hit || hit[0] === '-') this.fail('invalid number');
    this.pos += hit[0].length;
    return new JsonNumber(hit[0]);
  }

  string(): string {
    const t = this.text;
    let i = this.pos + 1; // after the opening quote
    let out = '';
    let runStart = i;
    for (;;) {
      const c = t.charCodeAt(i);
      if (Number.isNaN(c)) this.fail('unterminated string', this.pos);
      if (c === 0x22) {
        out += t.slice(runStart, i);
        this.pos = i + 1;
        return out;
      }
      if (c < 0x20) this.fail('control character inside a string', i);
      if (c >= 0xd800 && c <= 0xdfff) {
        // Raw surrogates only arise from a decoder that let them through; keep pairs, reject lone ones.
        const next = t.charCodeAt(i + 1);
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          i += 2;
          continue;
        }
        this.fail('lone surrogate inside a string', i);
      }
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += t.slice(runStart, i);
      const e = t.charCodeAt(i + 1);
      switch (e) {
        case 0x22: out += '"'; i += 2; break;
        case 0x5c: out += '\\'; i += 2; break;
        case 0x2f: out += '/'; i += 2; break;
        case 0x62: out += '\b'; i += 2; break;
        case 0x66: out += '\f'; i += 2; break;
        case 0x6e: out += '\n'; i += 2; break;
        case 0x72: out += '\r'; i += 2; break;
        case 0x74: out += '\t'; i += 2; break;
        case 0x75: {
          const unit = this.hex4(i + 2);
          i += 6;
          if (unit >= 0xd800 && unit <= 0xdbff) {
            // A high surrogate must be followed by an escaped low surrogate.
            if (t.charCodeAt(i) !== 0x5c || t.charCodeAt(i + 1) !== 0x75) this.fail('lone surrogate escape', i - 6);
            const low = this.hex4(i + 2);
            if (low < 0xdc00 || low > 0xdfff) this.fail('lone surrogate escape', i - 6);
            out += String.fromCharCode(unit, low);
            i += 6;
          } else if (unit >= 0xdc00 && unit <= 0xdfff) {
            this.fail('lone surrogate escape', i - 6);
          } else {
            out += String.fromCharCode(unit);
          }
          break;
        }
        default:
          this.fail('invalid escape in a string', i);
      }
      runStart = i;
    }
  }

  hex4(at: number): number {
    const s = this.text.slice(at, at + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(s)) this.fail('invalid \\u escape', at - 2);
    return parseInt(s, 16);
  }
}
