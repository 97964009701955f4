/**
 * The outer layer of every file poptfjs writes: a magic header, then a
 * `FileEnvelope` holding the poptfjs version, the content type, the payload
 * and a SHA-256 over all three.
 *
 * Reading checks, in order: the header (is it a poptfjs file at all), the
 * envelope (can it be decoded), the hash (is it intact: a truncated or
 * altered file fails here), the version (the exact same poptfjs), and the
 * content type. Only then is the payload decoded. Every failure is a
 * {@link PoptfjsError} naming the file and what failed.
 */
import { createHash } from 'node:crypto';
import { PoptfjsError } from '../common/errors.js';
import { ContentType, decodeMessage, encodeMessage, Messages, type FileEnvelopeMessage } from '../proto/executable_proto.js';
import { POPTFJS_VERSION } from './poptfjs_version.js';

/** The first bytes of every poptfjs file. */
export const FILE_MAGIC = new TextEncoder().encode('POPTFJS\n');

/** The content types, by name. */
export type FileContent = 'executable' | 'checkpoint';

const CONTENT_CODES: Record<FileContent, number> = { executable: ContentType.EXECUTABLE, checkpoint: ContentType.CHECKPOINT };

function contentName(code: number): FileContent | undefined {
  return (Object.keys(CONTENT_CODES) as FileContent[]).find((k) => CONTENT_CODES[k] === code);
}

function contentHash(version: string, contentType: number, payload: Uint8Array): Uint8Array {
  return createHash('sha256')
    .update(version, 'utf8')
    .update(new Uint8Array([0, contentType]))
    .update(payload)
    .digest();
}

/** The bytes of a file holding `payload`, stamped with `version` (this poptfjs's, unless testing compatibility). */
export function encodeFileEnvelope(content: FileContent, payload: Uint8Array, version: string = POPTFJS_VERSION): Uint8Array {
  const contentType = CONTENT_CODES[content];
  const envelope = encodeMessage(Messages.FileEnvelope, {
    poptfjs_version: version,
    content_type: contentType,
    payload,
    sha256: contentHash(version, contentType, payload),
  });
  const bytes = new Uint8Array(FILE_MAGIC.length + envelope.length);
  bytes.set(FILE_MAGIC);
  bytes.set(envelope, FILE_MAGIC.length);
  return bytes;
}

/** What a verified file holds. */
export interface VerifiedFile {
  readonly content: FileContent;
  readonly version: string;
  readonly payload: Uint8Array;
}

function corrupted(file: string, what: string): PoptfjsError {
  return new PoptfjsError(`${file}: the file is corrupted or truncated (${what}); write it again`, { type: 'file', location: file });
}

/**
 * Verifies the bytes of `file` and returns the payload. `expected` is the
 * content the caller can read (absent: any); anything else is an error saying
 * what the file is.
 */
export function decodeFileEnvelope(bytes: Uint8Array, file: string, expected?: FileContent): VerifiedFile {
  if (bytes.length < FILE_MAGIC.length || FILE_MAGIC.some((b, i) => bytes[i] !== b)) {
    const empty = bytes.length === 0 ? ' (it is empty)' : '';
    throw new PoptfjsError(`${file}: not a poptfjs file${empty}: it does not start with the poptfjs header`, { type: 'file', location: file });
  }
  let envelope: FileEnvelopeMessage;
  try {
    envelope = decodeMessage(Messages.FileEnvelope, bytes.subarray(FILE_MAGIC.length), file);
  } catch (error) {
    throw corrupted(file, error instanceof Error ? error.message.replace(`${file}: `, '') : String(error));
  }
  if (envelope.sha256.length !== 32) throw corrupted(file, 'the content hash is missing');
  const actual = contentHash(envelope.poptfjs_version, envelope.content_type, envelope.payload);
  if (Buffer.compare(Buffer.from(actual), Buffer.from(envelope.sha256)) !== 0) {
    throw corrupted(file, 'the SHA-256 of its content does not match the one it was written with');
  }
  if (envelope.poptfjs_version !== POPTFJS_VERSION) {
    throw new PoptfjsError(
      `${file} was written by poptfjs ${envelope.poptfjs_version}, and this is poptfjs ${POPTFJS_VERSION}: ` +
        'files are only read by the exact version that wrote them; export it again with this version',
      { type: 'file', location: file },
    );
  }
  const content = contentName(envelope.content_type);
  if (content === undefined) throw corrupted(file, `unknown content type ${envelope.content_type}`);
  if (expected !== undefined && content !== expected) {
    throw new PoptfjsError(
      `${file} holds ${content === 'executable' ? 'an exported executable' : 'a checkpoint'}, not ${expected === 'executable' ? 'an exported executable' : 'a checkpoint'}`,
      {
        type: 'file',
        location: file,
      },
    );
  }
  return { content, version: envelope.poptfjs_version, payload: envelope.payload };
}
