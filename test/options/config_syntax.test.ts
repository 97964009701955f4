import { describe, expect, it } from 'vitest';
import { type ExpressionNode, parseConfig } from '../../lib/options/config_syntax.js';
import { ConfigSourceError } from '../../lib/options/config_tokens.js';

/** The value of a literal or list expression, for comparing parsed arguments. */
function plainValue(node: ExpressionNode): unknown {
  if (node.kind === 'literal') return node.value;
  if (node.kind === 'list') return node.items.map(plainValue);
  if (node.kind === 'name') return { name: node.name };
  if (node.kind === 'member') return { member: node.name, of: plainValue(node.object) };
  if (node.kind === 'dict') return { dict: node.entries.map((e) => [plainValue(e.key), plainValue(e.value)]) };
  return { call: plainValue(node.callee), args: node.args.map(plainValue), keywords: node.keywords.map((k) => [k.name, plainValue(k.value)]) };
}

function argumentsOf(text: string): unknown[] {
  const [statement] = parseConfig(`f(${text})`);
  if (statement?.kind !== 'call') throw new Error('expected a call');
  return statement.args.map(plainValue);
}

describe('config literals', () => {
  it.each([
    ['4', 4],
    ['-1', -1],
    ['+7', 7],
    ['0.25', 0.25],
    ['.5', 0.5],
    ['3.', 3],
    ['1e3', 1000],
    ['2.5E-2', 0.025],
    ['-1.5e+1', -15],
    ['"double"', 'double'],
    ["'single'", 'single'],
    [String.raw`"a\"b\\c\n\t\r"`, 'a"b\\c\n\t\r'],
    [String.raw`'it\'s'`, "it's"],
    [String.raw`"\x41\u00e9\0"`, 'A\u00e9\0'],
    ['"# not a comment"', '# not a comment'],
    ['True', true],
    ['False', false],
    ['None', null],
    ['true', true],
    ['false', false],
    ['null', null],
    ['[]', []],
    ['[1, [2, "x"], ]', [1, [2, 'x']]],
    ['()', []],
    ['(1,)', [1]],
    ['(1, 2)', [1, 2]],
    ['(3)', 3],
  ] as const)('%s', (text, value) => {
    expect(argumentsOf(text)).toEqual([value]);
  });
});

describe('config statements', () => {
  it('parses names, members, calls, keyword arguments and chains', () => {
    const [statement] = parseConfig('a.b(1, x=poptorch.E.M).c(y_z=[Stage("s").ipu(0)])');
    expect(plainValue(statement as ExpressionNode)).toEqual({
      call: { member: 'c', of: { call: { member: 'b', of: { name: 'a' } }, args: [1], keywords: [['x', { member: 'M', of: { member: 'E', of: { name: 'poptorch' } } }]] } },
      args: [],
      keywords: [['y_z', [{ call: { member: 'ipu', of: { call: { name: 'Stage' }, args: ['s'], keywords: [] } }, args: [0], keywords: [] }]]],
    });
  });

  it('splits statements on lines and semicolons, skipping comments and blank lines', () => {
    const statements = parseConfig('# head\n\na(1); b(2);\n// note\nc(3)  # tail\r\n\n');
    expect(statements.map((statement) => plainValue(statement))).toEqual([
      { call: { name: 'a' }, args: [1], keywords: [] },
      { call: { name: 'b' }, args: [2], keywords: [] },
      { call: { name: 'c' }, args: [3], keywords: [] },
    ]);
  });

  it('records 1-based positions, with calls at their method name', () => {
    const [statement] = parseConfig('\n   Training.gradientAccumulation(4)');
    expect(statement).toMatchObject({ kind: 'call', line: 2, column: 13 });
  });

  it('joins lines inside brackets', () => {
    const statements = parseConfig('f(\n  1,\n  [2,\n   3],\n)\ng()');
    expect(statements).toHaveLength(2);
    expect(plainValue(statements[0] as ExpressionNode)).toEqual({ call: { name: 'f' }, args: [1, [2, 3]], keywords: [] });
  });

  it('reports syntax errors with their position', () => {
    const error = (() => {
      try {
        parseConfig('f(1)\ng(2, , 3)');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigSourceError);
    expect((error as ConfigSourceError).position).toEqual({ line: 2, column: 6 });
  });
});
