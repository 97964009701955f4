/**
 * Where in the user's code an op was made: the first frame of the call stack
 * outside poptfjs and the packages it runs on, as PopTorch records the
 * source location of each op (skipping its own and torch's files, its
 * `sourceLocationExcludes`).
 */
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Graph } from '../ir/graph.js';

/** poptfjs's own folders (its sources and its build), whose frames are not the user's. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OWN_FOLDERS = ['lib', 'ops', 'optim', 'dist'].map((folder) => `${ROOT}${folder}${sep}`);
/**
 * The folders of poptfjs that call a model (tracing it, running a loss, a
 * session): a kernel reached through them, with no user frame in between,
 * was made by poptfjs or by a layers model's own code, not by a line of the
 * user's (the user frame beyond is the call that compiled the model).
 */
const DRIVER_FOLDERS = ['lib/executor', 'lib/trace', 'lib/runtime', 'lib/session', 'lib/onnx', 'dist'].map((folder) => `${ROOT}${folder.split('/').join(sep)}${sep}`);
/** The folders of the recorder and of the other hooks on tfjs's engine, whose frames come first. */
const HOOK_FOLDERS = ['lib/trace', 'lib/backend'].map((folder) => `${ROOT}${folder.split('/').join(sep)}${sep}`);
/** Frames looked at: enough to get past the engine hooks and tfjs's op wrappers (collecting frames is the cost of this). */
const FRAMES = 16;

const inFolder = (file: string, folders: readonly string[]) => folders.some((folder) => file.startsWith(folder));

/** The positions in the files as written of the frames met so far, by file and position run (mapping one is slow). */
const mappedPositions = new Map<string, string>();

/**
 * `line:column` of `frame` in the file as written: a stack formatter that
 * reads source maps (tsx's, vitest's) gives the position before
 * TypeScript was compiled; without one, the frame's own.
 */
function originalPosition(frame: NodeJS.CallSite, file: string, prepare: typeof Error.prepareStackTrace): string {
  const own = `${frame.getLineNumber()}:${frame.getColumnNumber()}`;
  if (typeof prepare !== 'function') return own;
  const key = `${file}:${own}`;
  let position = mappedPositions.get(key);
  if (position === undefined) {
    const match = /:(\d+):(\d+)\)?$/.exec(String(prepare(new Error(), [frame])).trimEnd());
    position = match ? `${match[1]}:${match[2]}` : own;
    mappedPositions.set(key, position);
  }
  return position;
}

/**
 * `file:line:column` of the user's code that made the kernel being recorded,
 * relative to the working directory when under it: the first frame past the
 * recorder's and the engine hooks' own that is neither in node_modules nor poptfjs's
 * (ops a user calls, such as `half` or `ops.identityLoss`, are skipped over);
 * undefined when poptfjs's driving code comes first (a layers model's
 * layers, a loss poptfjs computes).
 */
export function userSourceLocation(): string | undefined {
  const prepare = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  const holder: { stack?: NodeJS.CallSite[] } = {};
  try {
    Error.prepareStackTrace = (_error, frames) => frames;
    Error.stackTraceLimit = FRAMES;
    Error.captureStackTrace(holder, userSourceLocation);
    let pastRecorder = false;
    for (const frame of holder.stack ?? []) {
      const name = frame.getFileName();
      if (!name) continue;
      const file = name.startsWith('file://') ? fileURLToPath(name) : name;
      if (!pastRecorder && inFolder(file, HOOK_FOLDERS)) continue;
      pastRecorder = true;
      if (file.startsWith('node:') || file.includes(`${sep}node_modules${sep}`)) continue;
      if (inFolder(file, DRIVER_FOLDERS)) return undefined;
      if (inFolder(file, OWN_FOLDERS)) continue;
      const shown = file.startsWith(process.cwd() + sep) ? relative(process.cwd(), file) : file;
      return `${shown}:${originalPosition(frame, file, prepare)}`;
    }
    return undefined;
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
}

/** `graph` without the source locations of its nodes (and of its bodies' nodes): what compiling it produces does not depend on them. */
export function withoutSourceLocations(graph: Graph): Graph {
  if (!graph.nodes.some((n) => n.annotations.source !== undefined || n.bodies)) return graph;
  return {
    ...graph,
    nodes: graph.nodes.map((node) => {
      const { source: _source, ...annotations } = node.annotations;
      return { ...node, annotations, ...(node.bodies ? { bodies: node.bodies.map(withoutSourceLocations) } : {}) };
    }),
  };
}
