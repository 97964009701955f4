/**
 * Archives in the Unix `ar` format (what Poplar's `archive.a` is, and what
 * `ar t` lists): the global header `!<arch>\n`, then each member as a
 * 60-byte header (name terminated by `/`, date, owner, group, mode, size,
 * and the two bytes `` `\n ``) followed by its bytes, padded with `\n` to an
 * even length. poptfjs's archives end with a member `sha256sums` listing the
 * SHA-256 of every other member as `sha256sum` prints it, so a reader can
 * tell an intact archive from a torn or altered one.
 *
 * Written atomically (atomic_file.ts); read back verified: the header, each
 * member header, each size, and every checksum.
 */
import { createHash } from 'node:crypto';
import { PoptfjsError } from '../common/errors.js';
import { readFileBytes } from '../common/regular_file.js';
import { writeFileAtomic } from './atomic_file.js';

/** One member: a name of at most 15 characters without `/`, and its bytes. */
export interface ArchiveMember {
  readonly name: string;
  readonly bytes: Uint8Array;
}

const GLOBAL_HEADER = '!<arch>\n';
const HEADER_BYTES = 60;
/** The member that holds the checksums of the others. */
export const CHECKSUM_MEMBER = 'sha256sums';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function memberHeader(name: string, size: number): Uint8Array {
  const field = (value: string, width: number) => value.padEnd(width, ' ');
  const header = `${field(`${name}/`, 16)}${field('0', 12)}${field('0', 6)}${field('0', 6)}${field('644', 8)}${field(String(size), 10)}\`\n`;
  return new TextEncoder().encode(header);
}

/** The bytes of an archive of `members`, with the checksum member last. */
export function encodeArchive(members: readonly ArchiveMember[]): Uint8Array[] {
  for (const m of members) {
    if (!/^[^/\s]{1,15}$/.test(m.name) || m.name === CHECKSUM_MEMBER) {
      throw new PoptfjsError(`archive member name '${m.name}': expected 1 to 15 characters, no '/' or space, and not '${CHECKSUM_MEMBER}'`, { type: 'file' });
    }
  }
  const sums = new TextEncoder().encode(members.map((m) => `${sha256(m.bytes)}  ${m.name}\n`).join(''));
  const chunks: Uint8Array[] = [new TextEncoder().encode(GLOBAL_HEADER)];
  for (const m of [...members, { name: CHECKSUM_MEMBER, bytes: sums }]) {
    chunks.push(memberHeader(m.name, m.bytes.length), m.bytes);
    if (m.bytes.length % 2 === 1) chunks.push(new Uint8Array([0x0a]));
  }
  return chunks;
}

/** Writes an archive of `members` to `path` atomically. */
export function writeArchive(path: string, members: readonly ArchiveMember[]): void {
  writeFileAtomic(path, encodeArchive(members));
}

function corrupted(path: string, what: string): PoptfjsError {
  return new PoptfjsError(`${path}: the archive is corrupted or truncated (${what}); write it again`, { type: 'file', location: path });
}

/** The members of the archive at `path` (less the checksum member), after checking its structure and every checksum. */
export function readArchive(path: string): ArchiveMember[] {
  const bytes = readFileBytes(path);
  const text = (from: number, length: number) => new TextDecoder('latin1').decode(bytes.subarray(from, from + length));
  if (text(0, GLOBAL_HEADER.length) !== GLOBAL_HEADER) throw new PoptfjsError(`${path}: not an ar archive (no '!<arch>' header)`, { type: 'file', location: path });
  const members: ArchiveMember[] = [];
  let at = GLOBAL_HEADER.length;
  while (at < bytes.length) {
    if (at + HEADER_BYTES > bytes.length) throw corrupted(path, `member header at byte ${at} cut short`);
    const header = text(at, HEADER_BYTES);
    const name = header.slice(0, 16).trimEnd();
    const size = Number(header.slice(48, 58).trim());
    if (header.slice(58, 60) !== '`\n' || !name.endsWith('/') || !Number.isInteger(size) || size < 0) throw corrupted(path, `bad member header at byte ${at}`);
    const start = at + HEADER_BYTES;
    if (start + size > bytes.length) throw corrupted(path, `member '${name.slice(0, -1)}' holds ${size} bytes, ${bytes.length - start} remain`);
    members.push({ name: name.slice(0, -1), bytes: bytes.subarray(start, start + size) });
    at = start + size + (size % 2);
  }
  const sums = members.pop();
  if (sums?.name !== CHECKSUM_MEMBER) throw corrupted(path, `no '${CHECKSUM_MEMBER}' member at the end`);
  const listed = new TextDecoder()
    .decode(sums.bytes)
    .split('\n')
    .filter((line) => line !== '');
  if (listed.length !== members.length) throw corrupted(path, `${CHECKSUM_MEMBER} lists ${listed.length} members, the archive holds ${members.length}`);
  members.forEach((m, i) => {
    if (listed[i] !== `${sha256(m.bytes)}  ${m.name}`) throw corrupted(path, `member '${m.name}' does not match its checksum`);
  });
  return members;
}
