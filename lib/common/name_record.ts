/**
 * Records keyed by names that come from outside the program (a file's
 * parameter, slot or pattern names). A plain object answers a lookup of a
 * name it lacks with what its prototype has (`record['constructor']`, `'toString'
 * in record`), and `record['__proto__'] = value` replaces its prototype; a
 * record without a prototype treats every name as a key like any other.
 */

/** A record of `entries` without a prototype (later entries of a name win). */
export function nameRecord<T>(entries: Iterable<readonly [string, T]> = []): Record<string, T> {
  const record = Object.create(null) as Record<string, T>;
  for (const [name, value] of entries) record[name] = value;
  return record;
}
