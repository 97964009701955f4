/**
 * The copies of the weights a worker IPU holds, per replica, by the main
 * thread's key of each weight's data. Replicas that share a weight's data on
 * the main thread (copy-on-write clones) share one copy on the worker. The
 * worker keeps one of these with its tensors; the main thread keeps a mirror
 * of each worker's (with no values) to know what to send.
 */

/** Weight copies by replica and parameter name, shared by key. */
export class WeightCopies<T> {
  private readonly byKey = new Map<number, { value: T; refs: number }>();
  private readonly keys = new Map<number, Map<string, number>>();
  private readonly values = new Map<number, Map<string, T>>();

  /** @param free called when no replica holds a copy any more */
  constructor(private readonly free: (value: T) => void = () => {}) {}

  /** The key of the copy `replica` holds for `param`. */
  keyOf(replica: number, param: string): number | undefined {
    return this.keys.get(replica)?.get(param);
  }

  /** True if some replica holds the copy with this key. */
  has(key: number): boolean {
    return this.byKey.has(key);
  }

  /**
   * Makes `replica` hold the copy `key` of `param`: the held one if some
   * replica has it, else `value` (required then). Frees the copy it held
   * before if nobody else holds it.
   */
  set(replica: number, param: string, key: number, value?: T): void {
    let entry = this.byKey.get(key);
    if (!entry) {
      if (value === undefined) throw new Error(`weight copy ${key} of '${param}' is not held and was not sent`);
      this.byKey.set(key, (entry = { value, refs: 0 }));
    }
    const keys = this.keys.get(replica) ?? new Map<string, number>();
    this.keys.set(replica, keys);
    const previous = keys.get(param);
    if (previous === key) return;
    entry.refs++;
    keys.set(param, key);
    this.valuesOf(replica).set(param, entry.value);
    if (previous !== undefined) this.release(previous);
  }

  private release(key: number): void {
    const entry = this.byKey.get(key)!;
    if (--entry.refs > 0) return;
    this.byKey.delete(key);
    this.free(entry.value);
  }

  /** The live map of the copies `replica` holds, by parameter name. */
  valuesOf(replica: number): Map<string, T> {
    let map = this.values.get(replica);
    if (!map) this.values.set(replica, (map = new Map()));
    return map;
  }

  /** Frees every copy. */
  clear(): void {
    for (const entry of this.byKey.values()) this.free(entry.value);
    this.byKey.clear();
    this.keys.clear();
    for (const map of this.values.values()) map.clear();
  }
}
