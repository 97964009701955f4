/**
 * The tokenizer of options config files (`deviceIterations(4)` per line).
 *
 * Tokens: identifiers, numbers (`4`, `-1`, `0.5`, `1e-3`), strings in single
 * or double quotes with backslash escapes, and the punctuation `( ) [ ] { } , . = : ;`
 * plus a sign before a number. `#` and `//` start comments that run to the end
 * of the line. Inside brackets a line break is only whitespace, so one call may
 * span several lines, as in Python.
 */

/** A 1-based line and column in a config file. */
export interface SourcePosition {
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
}

/** The punctuation of a config file. */
export type ConfigPunctuation = '(' | ')' | '[' | ']' | '{' | '}' | ',' | '.' | '=' | ':' | ';';

/** One token of a config file. */
export type ConfigToken = SourcePosition &
  (
    | { readonly kind: 'identifier'; readonly text: string }
    | { readonly kind: 'number'; readonly text: string; readonly value: number }
    | { readonly kind: 'string'; readonly text: string; readonly value: string }
    | { readonly kind: 'punctuation'; readonly text: ConfigPunctuation }
    | { readonly kind: 'newline'; readonly text: '\n' }
    | { readonly kind: 'end'; readonly text: '' }
  );

/**
 * A problem at a position of a config source: a syntax error, an unknown name
 * or an option call that failed (`cause` holds the setter's error). The file
 * loader turns it into a `ConfigFileError` naming the file.
 */
export class ConfigSourceError extends Error {
  /** Where the problem is. */
  readonly position: SourcePosition;

  constructor(position: SourcePosition, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ConfigSourceError';
    this.position = { line: position.line, column: position.column };
  }
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  b: '\b',
  f: '\f',
  '/': '/',
};

const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*/;

/** Splits `text` into tokens; the last token is always `end`. Throws a {@link ConfigSourceError} at the first bad character. */
// biome-ignore lint/complexity/noExcessiveCognitiveComplexity: a scanner: one branch per token class of the config syntax
export function tokenizeConfig(text: string): ConfigToken[] {
  const tokens: ConfigToken[] = [];
  let index = 0;
  let line = 1;
  let lineStart = 0;
  let depth = 0;
  const here = (): SourcePosition => ({ line, column: index - lineStart + 1 });

  while (index < text.length) {
    const char = text[index] as string;
    const rest = text.slice(index);
    if (char === '\n') {
      if (depth === 0) tokens.push({ kind: 'newline', text: '\n', ...here() });
      index += 1;
      line += 1;
      lineStart = index;
    } else if (char === ' ' || char === '\t' || char === '\r' || char === '\f' || char === '\v') {
      index += 1;
    } else if (char === '#' || rest.startsWith('//')) {
      while (index < text.length && text[index] !== '\n') index += 1;
    } else if (char === '"' || char === "'") {
      const start = here();
      const { value, end } = readString(text, index, start);
      tokens.push({ kind: 'string', text: text.slice(index, end), value, ...start });
      index = end;
    } else if (/[0-9]/.test(char) || ((char === '-' || char === '+' || char === '.') && NUMBER.test(rest.slice(char === '.' ? 0 : 1)))) {
      const start = here();
      const sign = char === '-' || char === '+' ? char : '';
      const digits = (NUMBER.exec(rest.slice(sign.length)) as RegExpExecArray)[0];
      const tail = text.slice(index + sign.length + digits.length);
      if (/^[A-Za-z_]/.test(tail)) throw new ConfigSourceError(start, `invalid number ${JSON.stringify(sign + digits + tail.charAt(0))}`);
      tokens.push({ kind: 'number', text: sign + digits, value: Number(sign + digits), ...start });
      index += sign.length + digits.length;
    } else if (IDENTIFIER.test(rest)) {
      const word = (IDENTIFIER.exec(rest) as RegExpExecArray)[0];
      tokens.push({ kind: 'identifier', text: word, ...here() });
      index += word.length;
    } else if ('()[]{},.=:;'.includes(char)) {
      if (char === '(' || char === '[' || char === '{') depth += 1;
      if ((char === ')' || char === ']' || char === '}') && depth > 0) depth -= 1;
      tokens.push({ kind: 'punctuation', text: char as ConfigPunctuation, ...here() });
      index += 1;
    } else {
      throw new ConfigSourceError(here(), `unexpected character ${JSON.stringify(char)}`);
    }
  }
  tokens.push({ kind: 'end', text: '', ...here() });
  return tokens;
}

function readString(text: string, start: number, position: SourcePosition): { value: string; end: number } {
  const quote = text[start] as string;
  let value = '';
  let index = start + 1;
  while (index < text.length) {
    const char = text[index] as string;
    if (char === quote) return { value, end: index + 1 };
    if (char === '\n') break;
    if (char !== '\\') {
      value += char;
      index += 1;
      continue;
    }
    const escaped = text[index + 1];
    const column = position.column + (index - start);
    const simple = escaped !== undefined && Object.hasOwn(SIMPLE_ESCAPES, escaped) ? SIMPLE_ESCAPES[escaped] : undefined;
    if (simple !== undefined) {
      value += simple;
      index += 2;
    } else if (escaped === 'x' || escaped === 'u') {
      const length = escaped === 'x' ? 2 : 4;
      const hex = text.slice(index + 2, index + 2 + length);
      if (!new RegExp(`^[0-9a-fA-F]{${length}}$`).test(hex)) {
        throw new ConfigSourceError({ line: position.line, column }, `invalid \\${escaped} escape: expected ${length} hex digits`);
      }
      value += String.fromCharCode(Number.parseInt(hex, 16));
      index += 2 + length;
    } else {
      throw new ConfigSourceError({ line: position.line, column }, `unknown escape sequence \\${escaped ?? ''}`);
    }
  }
  throw new ConfigSourceError(position, 'unterminated string: the closing quote is missing on this line');
}
