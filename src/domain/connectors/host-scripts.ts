import { domainToUnicode } from 'node:url';

// Scripts that appear in domain names; a letter of any other script counts as its own unnamed script.
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Georgian',
  'Hangul',
  'Ethiopic',
  'Cherokee',
  'Canadian_Aboriginal',
  'Khmer',
  'Mongolian',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Han',
  'Yi',
  'Tifinagh',
  'Nko',
] as const;

const SCRIPT_PATTERNS = SCRIPTS.map(
  (script) => [script, new RegExp(`^\\p{Script=${script}}$`, 'u')] as const,
);
const NEUTRAL = /^[\p{Script=Common}\p{Script=Inherited}]$/u;

// Script sets a single label may combine (Unicode TS #39, "highly restrictive"): one script, or these.
const ALLOWED_COMBINATIONS: readonly ReadonlySet<string>[] = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];

function scriptOf(character: string): string | null {
  if (NEUTRAL.test(character)) return null;
  return SCRIPT_PATTERNS.find(([, pattern]) => pattern.test(character))?.[0] ?? 'an unlisted script';
}

/** The scripts of a label's letters, digits and hyphens left out (Common and Inherited). */
export function scriptsOf(label: string): string[] {
  const scripts = new Set<string>();
  for (const character of label) {
    const script = scriptOf(character);
    if (script) scripts.add(script);
  }
  return [...scripts];
}

/**
 * Finds the first label of a (punycode) host name that mixes scripts, as look-alike names do ("аpple" with a
 * Cyrillic а). Japanese, Chinese and Korean labels may combine Han with their own scripts and Latin.
 */
export function findMixedScriptLabel(hostname: string): { label: string; scripts: string[] } | null {
  for (const label of domainToUnicode(hostname).split('.')) {
    const scripts = scriptsOf(label);
    if (scripts.length <= 1) continue;
    if (ALLOWED_COMBINATIONS.some((allowed) => scripts.every((script) => allowed.has(script)))) continue;
    return { label, scripts };
  }
  return null;
}
