// The two job products: their parameters, the accepted spellings, and what they cost.
export const JOB_KINDS = ['hairstyle', 'tryon'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** Pipeline a job kind runs (the registry's default version of it). */
export const JOB_PIPELINE: Readonly<Record<JobKind, string>> = { hairstyle: 'hairstyle', tryon: 'tryon' };

/** Credits per output picture (spec: "normal mode"). */
export const CREDITS_PER_PICTURE: Readonly<Record<JobKind, number>> = { hairstyle: 6, tryon: 8 };

export const HAIR_COLORS = ['black', 'brown', 'blonde', 'red', 'white', 'grey', 'pink', 'blue', 'green', 'purple'] as const;
export type HairColor = (typeof HAIR_COLORS)[number];

export const HAIRSTYLES = [
  'Braided Crown',
  'Long Layers',
  'Buzz Cut',
  'Bowl Cut',
  'Dreadlocks',
  'Short Hair',
  'Bombshell Curls',
  'Lowpoly',
  'Long Wave',
  'Short Curly',
  'Mohawk',
  'Crew Cut',
] as const;
export type Hairstyle = (typeof HAIRSTYLES)[number];
export const DEFAULT_HAIRSTYLE: Hairstyle = 'Braided Crown';

export const CLOTHES_TYPES = ['upper_body', 'lower_body', 'dresses'] as const;
export type ClothesType = (typeof CLOTHES_TYPES)[number];

export const PROMPT_MAX_LENGTH = 1000;

const squash = (s: string) => s.trim().replace(/\s+/g, ' ').toLowerCase();

/** Every spelling of `name` with exactly one letter missing. */
function oneLetterMissing(name: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < name.length; i++) if (name[i] !== ' ') out.add(name.slice(0, i) + name.slice(i + 1));
  return out;
}

// The spec's table spells the default with a letter missing; accept any such spelling of it.
const BRAIDED_CROWN_VARIANTS = oneLetterMissing(squash(DEFAULT_HAIRSTYLE));
const BY_NAME = new Map(HAIRSTYLES.map((h) => [squash(h), h]));

/** The canonical template name for a user's spelling (case-insensitive), or null. */
export function canonicalHairstyle(input: string): Hairstyle | null {
  const s = squash(input);
  return BY_NAME.get(s) ?? (BRAIDED_CROWN_VARIANTS.has(s) ? DEFAULT_HAIRSTYLE : null);
}

export function canonicalHairColor(input: string): HairColor | null {
  const s = squash(input);
  return (HAIR_COLORS as readonly string[]).includes(s) ? (s as HairColor) : null;
}

/** Boolean form fields: true/false, 1/0, yes/no, on/off (any case). */
export function parseBooleanText(input: string): boolean | null {
  const s = squash(input);
  if (['true', '1', 'yes', 'on'].includes(s)) return true;
  if (['false', '0', 'no', 'off'].includes(s)) return false;
  return null;
}
