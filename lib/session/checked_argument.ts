/**
 * Checking the arguments of the PopART API with zod: a value that does not
 * fit is a `popart_exception` naming the call, the offending field and what
 * was expected.
 */
import type { z } from 'zod';
import { PopartException } from '../common/errors.js';
import { describeValue } from '../option_vocabulary/argument_rules.js';

function fieldOf(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join('');
}

/** The keys a (nested) object or record schema allows at `path`, when it says. */
function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  type Node = { shape?: Record<string, Node>; keyType?: { options?: readonly string[] }; unwrap?: () => Node };
  let current: Node | undefined = schema as unknown as Node;
  for (const key of path) current = current?.shape?.[String(key)];
  while (current?.unwrap && !current.shape && !current.keyType) current = current.unwrap();
  if (current?.shape) return Object.keys(current.shape);
  return [...(current?.keyType?.options ?? [])];
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) current = current !== null && typeof current === 'object' ? (current as Record<PropertyKey, unknown>)[key] : undefined;
  return current;
}

/** `value` parsed by `schema`; a {@link PopartException} starting with `where` otherwise. */
export function checkedArgument<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = fieldOf(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys(schema, issue.path);
    const at = field ? ` in ${field}` : '';
    throw new PopartException(`${where}: unknown field(s)${at} ${issue.keys.map((k) => `'${k}'`).join(', ')}${known.length ? `; the fields are ${known.join(', ')}` : ''}`);
  }
  const got = describeValue(valueAt(value, issue.path));
  throw new PopartException(`${where}: ${field ? `${field} = ` : ''}${got} is invalid: ${issue.message.replace(/^Invalid input: /, '')}`);
}
