/**
 * Regenerates lib/proto/generated/executable_proto_descriptor.ts from
 * lib/proto/executable.proto.
 *
 * poptfjs loads the schema of its files with protobufjs's `Root.fromJSON`
 * from this committed descriptor, so the built package does not need the
 * .proto file at run time. Run after changing executable.proto:
 *
 *     npx tsx scripts/generate_executable_proto_descriptor.ts
 *
 * test/files/executable_proto.test.ts fails when the two files disagree.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EXECUTABLE_PROTO_PATH, executableProtoDescriptorSource } from './executable_proto_descriptor_source.js';

const target = fileURLToPath(new URL('../lib/proto/generated/executable_proto_descriptor.ts', import.meta.url));
writeFileSync(target, executableProtoDescriptorSource());
console.log(`wrote ${target} from ${EXECUTABLE_PROTO_PATH}`);
