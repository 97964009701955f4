/**
 * A strict JSON parser that remembers where each key and value is, so that
 * an error about `training.gradientAccumulation` can name the line and column
 * of that key in a JSON config file.
 *
 * Arrays and objects nested deeper than `MAX_CONFIG_NESTING` are a syntax
 * error at the bracket that goes too deep, so the recursive descent stays
 * within a bounded stack; the time taken is linear in the text's length.
 */
import { MAX_CONFIG_NESTING } from '../option_vocabulary/config_limits.js';
import type { SourcePosition } from './config_tokens.js';
import type { OptionsDataPath } from '../option_vocabulary/options_data_error.js';

/** JSON text that is not valid JSON, at a position. */
export class JsonSyntaxError extends Error {
  /** Where the problem is. */
  readonly position: SourcePosition;

  constructor(position: SourcePosition, message: string) {
    super(message);
    this.name = 'JsonSyntaxError';
    this.position = position;
  }
}

/** Parsed JSON with the positions of its keys. */
export interface LocatedJson {
  /** The parsed value, as `JSON.parse` would return it. */
  readonly value: unknown;
  /**
   * The position of the key at `path` (for array items, of the item), or of
   * its nearest ancestor that exists; the document's start for the root.
   */
  positionOf(path: OptionsDataPath): SourcePosition;
}

const ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/;

class JsonScanner {
  #index = 0;
  /** How many arrays and objects enclose the value being read. */
  #depth = 0;
  /** The line and the index of its first character, known for the text up to `#scannedTo`. */
  #line = 1;
  #lineStart = 0;
  #scannedTo = 0;
  readonly positions = new Map<string, SourcePosition>();

  constructor(private readonly text: string) {}

  parseDocument(): unknown {
    this.#skipWhitespace();
    this.positions.set(JSON.stringify([]), this.#position());
    const value = this.#parseValue([]);
    this.#skipWhitespace();
    if (this.#index < this.text.length) this.#fail('unexpected text after the JSON value');
    return value;
  }

  #parseValue(path: (string | number)[]): unknown {
    this.#skipWhitespace();
    const char = this.text[this.#index];
    if (char === '{' || char === '[') {
      this.#depth += 1;
      if (this.#depth > MAX_CONFIG_NESTING) this.#fail(`arrays and objects nested deeper than ${MAX_CONFIG_NESTING} levels; options need far fewer`);
      const value = char === '{' ? this.#parseObject(path) : this.#parseArray(path);
      this.#depth -= 1;
      return value;
    }
    if (char === '"') return this.#parseString();
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(word, this.#index)) {
        this.#index += word.length;
        return value;
      }
    }
    const number = NUMBER.exec(this.text.slice(this.#index));
    if (number !== null) {
      this.#index += number[0].length;
      return Number(number[0]);
    }
    return this.#fail(char === undefined ? 'unexpected end of JSON' : `unexpected character ${JSON.stringify(char)}`);
  }

  #parseObject(path: (string | number)[]): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    this.#index += 1;
    this.#skipWhitespace();
    if (this.text[this.#index] === '}') {
      this.#index += 1;
      return result;
    }
    for (;;) {
      this.#skipWhitespace();
      if (this.text[this.#index] !== '"') this.#fail('expected a key in double quotes');
      const keyPosition = this.#position();
      const key = this.#parseString();
      this.positions.set(JSON.stringify([...path, key]), keyPosition);
      this.#skipWhitespace();
      if (this.text[this.#index] !== ':') this.#fail('expected ":" after the key');
      this.#index += 1;
      const value = this.#parseValue([...path, key]);
      Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
      this.#skipWhitespace();
      const next = this.text[this.#index];
      this.#index += 1;
      if (next === '}') return result;
      if (next !== ',') {
        this.#index -= 1;
        this.#fail('expected "," or "}"');
      }
    }
  }

  #parseArray(path: (string | number)[]): unknown[] {
    const result: unknown[] = [];
    this.#index += 1;
    this.#skipWhitespace();
    if (this.text[this.#index] === ']') {
      this.#index += 1;
      return result;
    }
    for (;;) {
      this.#skipWhitespace();
      this.positions.set(JSON.stringify([...path, result.length]), this.#position());
      result.push(this.#parseValue([...path, result.length]));
      this.#skipWhitespace();
      const next = this.text[this.#index];
      this.#index += 1;
      if (next === ']') return result;
      if (next !== ',') {
        this.#index -= 1;
        this.#fail('expected "," or "]"');
      }
    }
  }

  #parseString(): string {
    let value = '';
    this.#index += 1;
    for (;;) {
      const char = this.text[this.#index];
      if (char === undefined || char === '\n') this.#fail('unterminated string');
      if (char === '"') {
        this.#index += 1;
        return value;
      }
      if (char === '\\') {
        const escaped = this.text[this.#index + 1] ?? '';
        if (escaped === 'u') {
          const hex = this.text.slice(this.#index + 2, this.#index + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.#fail('invalid \\u escape');
          value += String.fromCharCode(Number.parseInt(hex, 16));
          this.#index += 6;
        } else {
          const replacement = Object.hasOwn(ESCAPES, escaped) ? ESCAPES[escaped] : undefined;
          if (replacement === undefined) this.#fail(`invalid escape \\${escaped}`);
          value += replacement;
          this.#index += 2;
        }
      } else if (char < ' ') {
        this.#fail('control character in string');
      } else {
        value += char;
        this.#index += 1;
      }
    }
  }

  #skipWhitespace(): void {
    while (/[ \t\r\n]/.test(this.text[this.#index] ?? '')) this.#index += 1;
  }

  /** The position of `#index`, counting lines from the last position asked for (positions are asked for in text order). */
  #position(): SourcePosition {
    if (this.#index < this.#scannedTo) {
      this.#line = 1;
      this.#lineStart = 0;
      this.#scannedTo = 0;
    }
    for (let i = this.#scannedTo; i < this.#index; i += 1) {
      if (this.text.charCodeAt(i) === 10) {
        this.#line += 1;
        this.#lineStart = i + 1;
      }
    }
    this.#scannedTo = this.#index;
    return { line: this.#line, column: this.#index - this.#lineStart + 1 };
  }

  #fail(message: string): never {
    throw new JsonSyntaxError(this.#position(), message);
  }
}

/** Parses `text` as strict JSON, keeping the positions of keys. Throws {@link JsonSyntaxError}. */
export function parseLocatedJson(text: string): LocatedJson {
  const scanner = new JsonScanner(text);
  const value = scanner.parseDocument();
  const { positions } = scanner;
  return {
    value,
    positionOf(path) {
      for (let length = path.length; length >= 0; length -= 1) {
        const position = positions.get(JSON.stringify(path.slice(0, length)));
        if (position !== undefined) return position;
      }
      return { line: 1, column: 1 };
    },
  };
}
