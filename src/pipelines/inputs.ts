// Pipeline name -> input schema and which input fields are files (http URLs the worker downloads).
// Zod only, so the API process can validate task input without loading pipelines or models.
import { z } from 'zod';
import { FaceDetectionInput } from './face-detection/input.ts';
import { CLOTHES_TYPES, HAIR_COLORS, HAIRSTYLES, PROMPT_MAX_LENGTH, canonicalHairColor, canonicalHairstyle } from '../domain/job.ts';

export interface PipelineInputSpec {
  schema: z.ZodType<Record<string, unknown>>;
  fileFields: readonly string[];
}

/** An http(s) URL of a JPEG, PNG or WebP image. */
export const imageUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

export const ImageOnlyInput = z.strictObject({ image: imageUrl });

export const PoseInput = z.strictObject({
  image: imageUrl,
  /** Keypoints scoring below this are drawn faint and flagged not visible. Default: the version's. */
  min_score: z.number().min(0).max(1).optional(),
});

/** A file: an http(s) URL, or (tasks made by the job APIs) a stored file of the task. */
export const fileRef = z.union([imageUrl, z.string().regex(/^blob:tasks\/[0-9a-f]{32}\/inputs\/[\w.-]+$/)], { error: 'must be an http(s) URL' });

export const HairstyleInput = z.strictObject({
  /** 1 to 4 frontal photos of the same person; the best one is used. */
  image_files: z.array(fileRef).min(1, 'at least 1 photo').max(4, 'at most 4 photos'),
  hair_color: z.string().transform((s, c) => {
    const v = canonicalHairColor(s);
    if (!v) c.addIssue({ code: 'custom', message: `must be one of ${HAIR_COLORS.join(', ')}` });
    return v!;
  }),
  hairstyle: z
    .string()
    .default('Braided Crown')
    .transform((s, c) => {
      const v = canonicalHairstyle(s);
      if (!v) c.addIssue({ code: 'custom', message: `must be one of ${HAIRSTYLES.join(', ')}` });
      return v!;
    }),
  num_outputs: z.number().int().min(1).max(4).default(2),
  /** JPEG (default) or PNG pictures. */
  output_format: z.enum(['jpeg', 'png']).default('jpeg'),
  /** JPEG quality; default the version's. */
  jpeg_quality: z.number().int().min(50).max(100).optional(),
});

export const TryonInput = z.strictObject({
  /** The garment: a product photo on a plain background, or a photo of a person wearing it. */
  clothes_image: fileRef,
  /** The person to dress (best at 3:4). */
  custom_model: fileRef,
  clothes_type: z.enum(CLOTHES_TYPES),
  /** Stored and returned; this version does not interpret it. */
  prompt: z.string().max(PROMPT_MAX_LENGTH).optional(),
  /** Crop/pad the person photo to 3:4 around the body first. */
  forced_cutting: z.boolean().default(false),
  output_format: z.enum(['jpeg', 'png']).default('jpeg'),
});

export const PIPELINE_INPUTS: Readonly<Record<string, PipelineInputSpec>> = {
  'face-detection': { schema: FaceDetectionInput, fileFields: ['image'] },
  'face-landmarks': { schema: ImageOnlyInput, fileFields: ['image'] },
  'face-parsing': { schema: ImageOnlyInput, fileFields: ['image'] },
  'person-segmentation': { schema: ImageOnlyInput, fileFields: ['image'] },
  pose: { schema: PoseInput, fileFields: ['image'] },
  hairstyle: { schema: HairstyleInput as unknown as z.ZodType<Record<string, unknown>>, fileFields: ['image_files'] },
  tryon: { schema: TryonInput as unknown as z.ZodType<Record<string, unknown>>, fileFields: ['clothes_image', 'custom_model'] },
};
