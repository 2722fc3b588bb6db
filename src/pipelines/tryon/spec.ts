// Task input of the try-on pipeline (zod only). The job API's multipart fields are validated by the
// same schema (api/routes/jobs.ts), so the rules are written once.
import { z } from 'zod';
import { CLOTHES_TYPES, PROMPT_MAX_LENGTH } from '../../domain/job.ts';
import { fileRef, outputFormat, pipelineSpec, shown } from '../spec.ts';

export const TryonInput = z.strictObject({
  /** The garment: a product photo on a plain background, or a photo of a person wearing it. */
  clothes_image: fileRef,
  /** The person to dress (best at 3:4). */
  custom_model: fileRef,
  clothes_type: z.enum(CLOTHES_TYPES, {
    error: (i) => (i.input === undefined ? `required, one of ${CLOTHES_TYPES.join(', ')}` : `must be one of ${CLOTHES_TYPES.join(', ')} (got ${shown(i.input)})`),
  }),
  /** Stored and returned; this version does not interpret it. */
  prompt: z
    .string()
    .max(PROMPT_MAX_LENGTH, { error: (i) => `at most ${PROMPT_MAX_LENGTH} characters (got ${String(i.input).length})` })
    .optional(),
  /** Crop/pad the person photo to 3:4 around the body first. */
  forced_cutting: z.boolean({ error: (i) => `must be true or false (got ${shown(i.input)})` }).default(false),
  output_format: outputFormat,
});

export type TryonInput = z.infer<typeof TryonInput>;

/** The job API's text fields (multipart), validated by the same rules. */
export const TryonJobFields = TryonInput.pick({ clothes_type: true, prompt: true, forced_cutting: true });

export const tryonSpec = pipelineSpec({ name: 'tryon', algorithmVersion: 46, input: TryonInput, fileFields: ['clothes_image', 'custom_model'] });
