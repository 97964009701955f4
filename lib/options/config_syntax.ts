/**
 * The recursive-descent parser of options config files: tokens to statements.
 *
 * ```
 * file       := { [statement { ';' statement } [';']] (newline | end) }
 * statement  := expression
 * expression := primary { '.' identifier | '(' arguments ')' }
 * primary    := identifier | number | string | '[' items ']' | '(' items ')'
 * arguments  := [ argument { ',' argument } [','] ]
 * argument   := identifier '=' expression | expression
 * ```
 *
 * `True`/`False`/`None` (and `true`/`false`/`null`) are literals. Keyword
 * arguments come after positional ones. `(x)` is `x`; `(x,)` and `(x, y)` are
 * tuples, which behave as lists.
 */
import { type ConfigToken, ConfigSourceError, type SourcePosition, tokenizeConfig } from './config_tokens.js';

/** A literal value: number, string, boolean or null. */
export interface LiteralNode extends SourcePosition {
  /** Discriminant. */
  readonly kind: 'literal';
  /** The value written. */
  readonly value: number | string | boolean | null;
}

/** A bare name: `deviceIterations`, `poptorch`, `Stage`. */
export interface NameNode extends SourcePosition {
  /** Discriminant. */
  readonly kind: 'name';
  /** The name. */
  readonly name: string;
}

/** `object.name`; the position is that of `name`. */
export interface MemberNode extends SourcePosition {
  /** Discriminant. */
  readonly kind: 'member';
  /** The expression before the dot. */
  readonly object: ExpressionNode;
  /** The name after the dot. */
  readonly name: string;
}

/** A keyword argument `name=value`. */
export interface KeywordArgument extends SourcePosition {
  /** The parameter name, as written. */
  readonly name: string;
  /** The argument. */
  readonly value: ExpressionNode;
}

/** `callee(args, keyword=value)`; the position is that of the callee's last name. */
export interface CallNode extends SourcePosition {
  /** Discriminant. */
  readonly kind: 'call';
  /** What is called. */
  readonly callee: ExpressionNode;
  /** The positional arguments. */
  readonly args: readonly ExpressionNode[];
  /** The keyword arguments, after the positional ones. */
  readonly keywords: readonly KeywordArgument[];
}

/** `[a, b]` or `(a, b)`. */
export interface ListNode extends SourcePosition {
  /** Discriminant. */
  readonly kind: 'list';
  /** The items. */
  readonly items: readonly ExpressionNode[];
}

/** Any expression of a config file. */
export type ExpressionNode = LiteralNode | NameNode | MemberNode | CallNode | ListNode;

const KEYWORD_LITERALS: ReadonlyMap<string, boolean | null> = new Map([
  ['True', true],
  ['False', false],
  ['None', null],
  ['true', true],
  ['false', false],
  ['null', null],
]);

function describeToken(token: ConfigToken): string {
  if (token.kind === 'end') return 'the end of the file';
  if (token.kind === 'newline') return 'the end of the line';
  return JSON.stringify(token.text);
}

class ConfigParser {
  #index = 0;

  constructor(private readonly tokens: readonly ConfigToken[]) {}

  parseFile(): ExpressionNode[] {
    const statements: ExpressionNode[] = [];
    for (;;) {
      while (this.#peek().kind === 'newline') this.#next();
      if (this.#peek().kind === 'end') return statements;
      statements.push(this.#parseExpression());
      while (this.#isPunctuation(';')) {
        this.#next();
        const after = this.#peek();
        if (after.kind === 'newline' || after.kind === 'end') break;
        statements.push(this.#parseExpression());
      }
      const after = this.#peek();
      if (after.kind !== 'newline' && after.kind !== 'end') {
        throw new ConfigSourceError(after, `expected the end of the line after the option, got ${describeToken(after)}`);
      }
    }
  }

  #parseExpression(): ExpressionNode {
    let expression = this.#parsePrimary();
    for (;;) {
      if (this.#isPunctuation('.')) {
        this.#next();
        const name = this.#next();
        if (name.kind !== 'identifier') throw new ConfigSourceError(name, `expected a name after ".", got ${describeToken(name)}`);
        expression = { kind: 'member', object: expression, name: name.text, line: name.line, column: name.column };
      } else if (this.#isPunctuation('(')) {
        const position = expression.kind === 'member' || expression.kind === 'name' ? expression : this.#peek();
        this.#next();
        const { args, keywords } = this.#parseArguments();
        expression = { kind: 'call', callee: expression, args, keywords, line: position.line, column: position.column };
      } else {
        return expression;
      }
    }
  }

  #parsePrimary(): ExpressionNode {
    const token = this.#next();
    switch (token.kind) {
      case 'number':
      case 'string':
        return { kind: 'literal', value: token.value, line: token.line, column: token.column };
      case 'identifier': {
        const literal = KEYWORD_LITERALS.get(token.text);
        if (literal !== undefined) return { kind: 'literal', value: literal, line: token.line, column: token.column };
        return { kind: 'name', name: token.text, line: token.line, column: token.column };
      }
      case 'punctuation':
        if (token.text === '[') return this.#parseList(token, ']');
        if (token.text === '(') return this.#parseParenthesized(token);
        break;
      default:
        break;
    }
    throw new ConfigSourceError(token, `expected a value, a name or a call, got ${describeToken(token)}`);
  }

  #parseList(open: SourcePosition, close: ']' | ')'): ListNode {
    const items: ExpressionNode[] = [];
    while (!this.#isPunctuation(close)) {
      items.push(this.#parseExpression());
      if (!this.#isPunctuation(',')) break;
      this.#next();
    }
    this.#expect(close, open);
    return { kind: 'list', items, line: open.line, column: open.column };
  }

  #parseParenthesized(open: SourcePosition): ExpressionNode {
    if (this.#isPunctuation(')')) {
      this.#next();
      return { kind: 'list', items: [], line: open.line, column: open.column };
    }
    const first = this.#parseExpression();
    if (this.#isPunctuation(')')) {
      this.#next();
      return first;
    }
    this.#expect(',', open);
    const rest = this.#parseList(open, ')');
    return { ...rest, items: [first, ...rest.items] };
  }

  #parseArguments(): { args: ExpressionNode[]; keywords: KeywordArgument[] } {
    const args: ExpressionNode[] = [];
    const keywords: KeywordArgument[] = [];
    const open = this.tokens[this.#index - 1] as ConfigToken;
    while (!this.#isPunctuation(')')) {
      const token = this.#peek();
      const following = this.tokens[this.#index + 1];
      if (token.kind === 'identifier' && following?.kind === 'punctuation' && following.text === '=') {
        this.#next();
        this.#next();
        if (keywords.some((keyword) => keyword.name === token.text)) {
          throw new ConfigSourceError(token, `keyword argument ${token.text} is given twice`);
        }
        keywords.push({ name: token.text, value: this.#parseExpression(), line: token.line, column: token.column });
      } else {
        if (keywords.length > 0) {
          throw new ConfigSourceError(token, 'a positional argument cannot follow a keyword argument');
        }
        args.push(this.#parseExpression());
      }
      if (!this.#isPunctuation(',')) break;
      this.#next();
    }
    this.#expect(')', open);
    return { args, keywords };
  }

  #expect(text: string, open: SourcePosition): void {
    const token = this.#next();
    if (token.kind === 'punctuation' && token.text === text) return;
    const opened = text === ')' || text === ']' ? ` to close the one at line ${open.line}, column ${open.column}` : '';
    throw new ConfigSourceError(token, `expected "${text}"${opened}, got ${describeToken(token)}`);
  }

  #isPunctuation(text: string): boolean {
    const token = this.#peek();
    return token.kind === 'punctuation' && token.text === text;
  }

  #peek(): ConfigToken {
    return this.tokens[this.#index] as ConfigToken;
  }

  #next(): ConfigToken {
    const token = this.#peek();
    if (token.kind !== 'end') this.#index += 1;
    return token;
  }
}

/** Parses the text of a config file into one expression per statement. Throws {@link ConfigSourceError}. */
export function parseConfig(text: string): ExpressionNode[] {
  return new ConfigParser(tokenizeConfig(text)).parseFile();
}
