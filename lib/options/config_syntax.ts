/**
 * The recursive-descent parser of options config files: tokens to statements.
 *
 * ```
 * file       := { [statement { ';' statement } [';']] (newline | end) }
 * statement  := expression
 * expression := primary { '.' identifier | '(' arguments ')' }
 * primary    := identifier | number | string | '[' items ']' | '(' items ')' | '{' entries '}'
 * entries    := [ expression ':' expression { ',' expression ':' expression } [','] ]
 * arguments  := [ argument { ',' argument } [','] ]
 * argument   := identifier '=' expression | expression
 * ```
 *
 * `True`/`False`/`None` (and `true`/`false`/`null`) are literals. Keyword
 * arguments come after positional ones. `(x)` is `x`; `(x,)` and `(x, y)` are
 * tuples, which behave as lists.
 *
 * Nesting (brackets, calls, `.name` chains) deeper than `MAX_CONFIG_NESTING`
 * and calls with more than `MAX_CALL_ARGUMENTS` arguments are errors, so the
 * parser and the statement runner, which recurse over the tree, stay within
 * a bounded stack.
 */
import { MAX_CALL_ARGUMENTS, MAX_CONFIG_NESTING } from '../option_vocabulary/config_limits.js';
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

/** `{key: value, ...}`, a Python dict: `{"IPU0": 0.3}`. */
export interface DictNode extends SourcePosition {
  /** Discriminant. */
  readonly kind: 'dict';
  /** The entries, in order. */
  readonly entries: readonly { readonly key: ExpressionNode; readonly value: ExpressionNode }[];
}

/** Any expression of a config file. */
export type ExpressionNode = LiteralNode | NameNode | MemberNode | CallNode | ListNode | DictNode;

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

function tooDeep(position: SourcePosition): ConfigSourceError {
  return new ConfigSourceError(position, `nesting deeper than ${MAX_CONFIG_NESTING} levels (each bracket, call and ".name" counts one level); an option needs far fewer`);
}

class ConfigParser {
  #index = 0;
  /** How many brackets enclose the token being read. */
  #openBrackets = 0;
  /** The height of each parsed expression: 1 for a leaf, one more than its deepest child otherwise. */
  readonly #heights = new Map<ExpressionNode, number>();

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
        expression = this.#measured({ kind: 'member', object: expression, name: name.text, line: name.line, column: name.column }, [expression]);
      } else if (this.#isPunctuation('(')) {
        const position = expression.kind === 'member' || expression.kind === 'name' ? expression : this.#peek();
        this.#enterBracket(this.#next());
        const { args, keywords } = this.#parseArguments();
        this.#openBrackets -= 1;
        const children = [expression, ...args, ...keywords.map((keyword) => keyword.value)];
        expression = this.#measured({ kind: 'call', callee: expression, args, keywords, line: position.line, column: position.column }, children);
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
        if (token.text === '[' || token.text === '(' || token.text === '{') {
          this.#enterBracket(token);
          const value = token.text === '[' ? this.#parseList(token, ']') : token.text === '{' ? this.#parseDict(token) : this.#parseParenthesized(token);
          this.#openBrackets -= 1;
          return value;
        }
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
    return this.#measured({ kind: 'list', items, line: open.line, column: open.column }, items);
  }

  #parseDict(open: SourcePosition): DictNode {
    const entries: { key: ExpressionNode; value: ExpressionNode }[] = [];
    while (!this.#isPunctuation('}')) {
      if (entries.length === MAX_CALL_ARGUMENTS) throw new ConfigSourceError(this.#peek(), `a dict holds at most ${MAX_CALL_ARGUMENTS} entries`);
      const key = this.#parseExpression();
      this.#expect(':', open);
      entries.push({ key, value: this.#parseExpression() });
      if (!this.#isPunctuation(',')) break;
      this.#next();
    }
    this.#expect('}', open);
    return this.#measured(
      { kind: 'dict', entries, line: open.line, column: open.column },
      entries.flatMap((e) => [e.key, e.value]),
    );
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
    const items = [first, ...rest.items];
    return this.#measured({ ...rest, items }, items);
  }

  #parseArguments(): { args: ExpressionNode[]; keywords: KeywordArgument[] } {
    const args: ExpressionNode[] = [];
    const keywords: KeywordArgument[] = [];
    const keywordNames = new Set<string>();
    const open = this.tokens[this.#index - 1] as ConfigToken;
    while (!this.#isPunctuation(')')) {
      const token = this.#peek();
      if (args.length + keywords.length === MAX_CALL_ARGUMENTS) {
        throw new ConfigSourceError(token, `a call takes at most ${MAX_CALL_ARGUMENTS} arguments`);
      }
      const following = this.tokens[this.#index + 1];
      if (token.kind === 'identifier' && following?.kind === 'punctuation' && following.text === '=') {
        this.#next();
        this.#next();
        if (keywordNames.has(token.text)) {
          throw new ConfigSourceError(token, `keyword argument ${token.text} is given twice`);
        }
        keywordNames.add(token.text);
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
    const opened = text === ')' || text === ']' || text === '}' ? ` to close the one at line ${open.line}, column ${open.column}` : '';
    throw new ConfigSourceError(token, `expected "${text}"${opened}, got ${describeToken(token)}`);
  }

  /** Counts the opening `bracket` just read; an error if it is nested too deep. */
  #enterBracket(bracket: SourcePosition): void {
    this.#openBrackets += 1;
    if (this.#openBrackets > MAX_CONFIG_NESTING) throw tooDeep(bracket);
  }

  /** Records the height of `node` from those of its `children`; an error if it is too high. */
  #measured<T extends ExpressionNode>(node: T, children: readonly ExpressionNode[]): T {
    let height = 1;
    for (const child of children) height = Math.max(height, (this.#heights.get(child) ?? 1) + 1);
    if (height > MAX_CONFIG_NESTING) throw tooDeep(node);
    this.#heights.set(node, height);
    return node;
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
