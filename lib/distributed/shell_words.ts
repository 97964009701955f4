/**
 * Splits a command-line fragment into words as a POSIX shell does, without
 * expanding anything: blanks separate words, single quotes keep everything,
 * double quotes keep everything but `\"`, `\\`, `\$` and `` \` ``, and a
 * backslash outside quotes keeps the next character. `poptfjs run` reads
 * `--mpi-args "..."` with it.
 */
import { PoptfjsError } from '../common/errors.js';

/** The words of `text`; `what` names it in the error for an unterminated quote or a trailing backslash. */
// biome-ignore lint/complexity/noExcessiveCognitiveComplexity: a scanner: one branch per character class of the POSIX shell's quoting rules
export function shellWords(text: string, what: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new PoptfjsError(`${what}: unterminated ' in '${text}'`, { type: 'cli' });
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let quoted = '';
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === '\\' && '"\\$`'.includes(text[i + 1] ?? '')) i++;
        quoted += text[i];
      }
      if (i >= text.length) throw new PoptfjsError(`${what}: unterminated " in '${text}'`, { type: 'cli' });
      word = (word ?? '') + quoted;
    } else if (c === '\\') {
      if (i + 1 >= text.length) throw new PoptfjsError(`${what}: a backslash ends '${text}'`, { type: 'cli' });
      word = (word ?? '') + text[++i];
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
