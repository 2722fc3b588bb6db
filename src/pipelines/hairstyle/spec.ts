// Task input of the hairstyle pipeline (zod only). The job API's multipart fields are validated by
// the same schema (api/routes/jobs.ts), so the rules are written once.
import { z } from 'zod';
import { DEFAULT_HAIRSTYLE, HAIR_COLORS, HAIRSTYLES, canonicalHairColor, canonicalHairstyle } from '../../domain/job.ts';
import { fileRef, oneOf, outputFormat, pipelineSpec, shown } from '../spec.ts';

export const HairstyleInput = z.strictObject({
  /** 1 to 4 frontal photos of the same person; the best one is used. */
  image_files: z.array(fileRef).min(1, 'at least 1 photo').max(4, 'at most 4 photos'),
  hair_color: oneOf(HAIR_COLORS, canonicalHairColor),
  hairstyle: oneOf(HAIRSTYLES, canonicalHairstyle).default(DEFAULT_HAIRSTYLE),
  num_outputs: z
    .number({ error: (i) => `must be an integer from 1 to 4 (got ${shown(i.input)})` })
    .int({ error: (i) => `must be an integer from 1 to 4 (got ${shown(i.input)})` })
    .min(1, { error: (i) => `must be an integer from 1 to 4 (got ${shown(i.input)})` })
    .max(4, { error: (i) => `must be an integer from 1 to 4 (got ${shown(i.input)})` })
    .default(2),
  /** JPEG (default) or PNG pictures. */
  output_format: outputFormat,
  /** JPEG quality; default the version's. */
  jpeg_quality: z.number().int().min(50).max(100).optional(),
});

export type HairstyleInput = z.infer<typeof HairstyleInput>;

/** The job API's text fields (multipart), validated by the same rules. */
export const HairstyleJobFields = HairstyleInput.pick({ hair_color: true, hairstyle: true, num_outputs: true });

export const hairstyleSpec = pipelineSpec({ name: 'hairstyle', algorithmVersion: 71, input: HairstyleInput, fileFields: ['image_files'] });
