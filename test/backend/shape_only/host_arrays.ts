/**
 * Watching the host make arrays: every typed array JavaScript constructs
 * while a function runs, found by standing proxies of the typed-array
 * constructors in for the global ones (tfjs looks them up when it allocates,
 * so the arrays it fills with random draws, initial weights or fills are
 * seen). `instanceof` still holds for arrays made before.
 */

/** An array constructed while watched: its constructor, its length, and where it was made. */
export interface HostArray {
  readonly type: string;
  readonly length: number;
  readonly stack: string;
}

const TYPED_ARRAYS = ['Float32Array', 'Float64Array', 'Int8Array', 'Int16Array', 'Int32Array', 'Uint8Array', 'Uint8ClampedArray', 'Uint16Array', 'Uint32Array'] as const;

/**
 * Runs `fn` (awaited) and returns its result with the typed arrays of at
 * least `minLength` elements constructed meanwhile, in order.
 */
export async function hostArraysMadeBy<T>(minLength: number, fn: () => T | Promise<T>): Promise<{ result: T; arrays: HostArray[] }> {
  const arrays: HostArray[] = [];
  const globals = globalThis as unknown as Record<string, unknown>;
  const originals = TYPED_ARRAYS.map((type) => [type, globals[type] as new (...args: unknown[]) => ArrayLike<unknown>] as const);
  for (const [type, original] of originals) {
    globals[type] = new Proxy(original, {
      construct(target, args, newTarget) {
        const made = Reflect.construct(target, args, newTarget === globals[type] ? target : newTarget) as ArrayLike<unknown>;
        if (made.length >= minLength) arrays.push({ type, length: made.length, stack: new Error().stack ?? '' });
        return made;
      },
    });
  }
  try {
    return { result: await fn(), arrays };
  } finally {
    for (const [type, original] of originals) globals[type] = original;
  }
}

/** The arrays as a failure message shows them: type, length and the first frames of where each was made. */
export function describeArrays(arrays: readonly HostArray[]): string {
  return arrays.map((a) => `${a.type}(${a.length})\n${a.stack.split('\n').slice(2, 9).join('\n')}`).join('\n\n');
}
