// What the API needs to know of a pipeline without loading it: its input schema, which input fields
// hold files and the version of its algorithm. Zod only: the API process validates task input with
// these and never loads a pipeline, a model or onnxruntime.
import { z } from 'zod';
import { STORED_INPUT_REF } from '../domain/blob-keys.ts';

export interface PipelineSpec<I extends Record<string, unknown> = Record<string, unknown>, F extends string = string> {
  /** Key of the pipeline tables and of a manifest's `pipeline`. */
  readonly name: string;
  /**
   * Version of the code between the graphs. A manifest must pin the same `algorithm_version`
   * (absent = 1); bump both with any change that alters outputs (golden outputs check it).
   */
  readonly algorithmVersion: number;
  /** Validates task input (and applies defaults). */
  readonly input: z.ZodType<I>;
  /** Input fields that hold files: one reference, or a list of them. */
  readonly fileFields: readonly F[];
}

export function pipelineSpec<I extends Record<string, unknown>, F extends keyof I & string>(spec: PipelineSpec<I, F>): PipelineSpec<I, F> {
  return Object.freeze(spec);
}

/** An http(s) URL of a JPEG, PNG or WebP image. */
export const imageUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

/** A file: an http(s) URL, or (tasks made by the job APIs) a stored file of the task. */
export const fileRef = z.union([imageUrl, z.string().regex(STORED_INPUT_REF)], { error: 'must be an http(s) URL' });

export const ImageOnlyInput = z.strictObject({ image: imageUrl });

/** How a value appears in an error message: text quoted and cut at 40 characters, others as JSON. */
export const shown = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : JSON.stringify(v) ?? 'nothing');

/**
 * A field whose value must be one of `names`, accepting the spellings `canonical` knows. Its
 * messages are the ones the job APIs return ("required, one of ...", "must be one of ... (got x)").
 */
export function oneOf<T extends string>(names: readonly T[], canonical: (s: string) => T | null) {
  return z.string({ error: (i) => (i.input === undefined ? `required, one of ${names.join(', ')}` : `must be one of ${names.join(', ')} (got ${shown(i.input)})`) }).transform((s, c) => {
    const v = canonical(s);
    if (!v) c.addIssue({ code: 'custom', message: `must be one of ${names.join(', ')} (got ${shown(s)})` });
    return v as T;
  })
    // A transform has no JSON Schema of its own: this is what the OpenAPI document shows.
    .meta({ enum: [...names], description: 'One of these names; case and extra spaces are ignored.' });
}

/** Output picture format of the pipelines that make pictures: JPEG (default) or PNG. */
export const outputFormat = z.enum(['jpeg', 'png']).default('jpeg');
