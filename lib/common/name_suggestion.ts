/**
 * Suggesting the name that was probably meant: the candidate closest to a
 * misspelt name by edit distance (letters compared without regard to case).
 */

/** The edit distance (insertions, deletions, substitutions) between two names, ignoring case. */
function editDistance(a: string, b: string): number {
  const previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    let diagonal = previous[0] as number;
    previous[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const above = previous[j] as number;
      const cost = a[i - 1]?.toLowerCase() === b[j - 1]?.toLowerCase() ? 0 : 1;
      previous[j] = Math.min(above + 1, (previous[j - 1] as number) + 1, diagonal + cost);
      diagonal = above;
    }
  }
  return previous[b.length] as number;
}

/**
 * `; did you mean X?` for the candidate closest to `name`, if one is close
 * enough. A candidate whose length differs from the name's by at least the
 * best distance so far cannot be closer (the edit distance is at least the
 * difference of lengths) and is not compared, so a huge name costs no more
 * than reading it.
 */
export function didYouMean(name: string, candidates: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of candidates) {
    if (Math.abs(name.length - candidate.length) >= bestDistance) continue;
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best === undefined ? '' : `; did you mean ${best}?`;
}
