/**
 * Regenerates lib/onnx/proto/generated/onnx_proto_descriptor.ts from lib/onnx/proto/onnx.proto.
 *
 * poptfjs loads the ONNX schema with protobufjs's `Root.fromJSON` from this
 * committed descriptor, so the built package does not need the .proto file at
 * run time. Run after replacing onnx.proto with another ONNX release:
 *
 *     npx tsx scripts/generate_onnx_proto_descriptor.ts
 *
 * test/onnx/onnx_proto.test.ts fails when the two files disagree.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ONNX_PROTO_PATH, onnxProtoDescriptorSource } from './onnx_proto_descriptor_source.js';

const target = fileURLToPath(new URL('../lib/onnx/proto/generated/onnx_proto_descriptor.ts', import.meta.url));
writeFileSync(target, onnxProtoDescriptorSource());
console.log(`wrote ${target} from ${ONNX_PROTO_PATH}`);
