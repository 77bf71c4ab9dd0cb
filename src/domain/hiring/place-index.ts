import places from './places.json' with { type: 'json' };

export interface SubdivisionEntry {
  code: string;
  country: string;
  name: string;
}

export interface CityEntry {
  name: string;
  country: string;
  subdivision: string | null;
}

interface PlaceIndex {
  countries: Map<string, string>;
  isoCountries: Set<string>;
  subdivisionsByCode: Map<string, SubdivisionEntry>;
  subdivisionsByName: Map<string, SubdivisionEntry>;
  standaloneShortCodes: Map<string, SubdivisionEntry>;
  citiesByKey: Map<string, CityEntry[]>;
  ignoredTerms: Set<string>;
  bareNameNotes: Map<string, { subdivision: SubdivisionEntry; note: string }>;
}

// Country names come from ICU in several languages so that 'Deutschland' or 'Allemagne' resolve too.
const NAME_LOCALES = ['en', 'de', 'fr', 'es'] as const;

export function normalizePlace(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/&/g, ' and ')
    .replace(/[.'’`]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .replace(/^the /, '');
}

function addFirst<V>(map: Map<string, V>, key: string, value: V): void {
  if (key !== '' && !map.has(key)) map.set(key, value);
}

function buildIndex(): PlaceIndex {
  const notIso = new Set(places.not_iso_3166_1);
  const countries = new Map<string, string>();
  const isoCountries = new Set<string>();
  const english = new Intl.DisplayNames('en', { type: 'region', fallback: 'none' });
  for (let first = 65; first <= 90; first++) {
    for (let second = 65; second <= 90; second++) {
      const code = String.fromCharCode(first, second);
      const name = english.of(code);
      if (notIso.has(code) || name === undefined || name === code) continue;
      isoCountries.add(code);
      countries.set(code.toLowerCase(), code);
    }
  }
  for (const [code, aliases] of Object.entries(places.country_aliases)) {
    for (const alias of aliases) addFirst(countries, normalizePlace(alias), code);
  }
  for (const locale of NAME_LOCALES) {
    for (const style of ['long', 'short'] as const) {
      const names = new Intl.DisplayNames(locale, { type: 'region', style, fallback: 'none' });
      for (const code of isoCountries) addFirst(countries, normalizePlace(names.of(code) ?? ''), code);
    }
  }

  const subdivisionsByCode = new Map<string, SubdivisionEntry>();
  const subdivisionsByName = new Map<string, SubdivisionEntry>();
  const standaloneShortCodes = new Map<string, SubdivisionEntry>();
  const standaloneCountries = new Set(places.short_codes_standalone);
  for (const raw of places.subdivisions) {
    const country = raw.code.slice(0, 2);
    const entry: SubdivisionEntry = { code: raw.code, country, name: raw.name };
    subdivisionsByCode.set(raw.code, entry);
    const formerCodes: string[] = ('former_codes' in raw && raw.former_codes) || [];
    for (const former of formerCodes) subdivisionsByCode.set(former, entry);
    for (const name of [raw.name, ...raw.aliases]) addFirst(subdivisionsByName, normalizePlace(name), entry);
    if (standaloneCountries.has(country)) standaloneShortCodes.set(raw.code.slice(3).toLowerCase(), entry);
  }

  const citiesByKey = new Map<string, CityEntry[]>();
  for (const raw of places.cities) {
    const subdivision: string | null = ('subdivision' in raw && raw.subdivision) || null;
    const country: string = subdivision?.slice(0, 2) ?? (('country' in raw && raw.country) || '');
    const entry: CityEntry = { name: raw.name, country, subdivision };
    for (const name of new Set([raw.name, ...raw.aliases].map(normalizePlace))) {
      citiesByKey.set(name, [...(citiesByKey.get(name) ?? []), entry]);
    }
  }

  const bareNameNotes = new Map<string, { subdivision: SubdivisionEntry; note: string }>();
  for (const [key, value] of Object.entries(places.bare_name_notes)) {
    const subdivision = subdivisionsByCode.get(value.subdivision);
    if (subdivision) bareNameNotes.set(key, { subdivision, note: value.note });
  }

  return {
    countries,
    isoCountries,
    subdivisionsByCode,
    subdivisionsByName,
    standaloneShortCodes,
    citiesByKey,
    ignoredTerms: new Set(places.ignored_terms),
    bareNameNotes,
  };
}

let cached: PlaceIndex | undefined;

export function placeIndex(): PlaceIndex {
  cached ??= buildIndex();
  return cached;
}

export function countryLabel(code: string): string {
  const override = (places.country_labels as Record<string, string | undefined>)[code];
  if (override) return override;
  const name = new Intl.DisplayNames('en', { type: 'region', fallback: 'code' }).of(code) ?? code;
  return name.replace(/ & /g, ' and ');
}

const DEFINITE_ARTICLE_COUNTRIES = new Set(['BS', 'GM', 'MV', 'NL', 'PH', 'VA']);

/** The country as it reads inside a sentence: "the United States", "the Netherlands", "Germany". */
export function countryInSentence(code: string): string {
  const label = countryLabel(code);
  const needsArticle =
    DEFINITE_ARTICLE_COUNTRIES.has(code) || /^United |Republic|Islands$|Territories$|Emirates$/.test(label);
  return needsArticle ? `the ${label}` : label;
}

export function subdivisionName(code: string): string | null {
  return placeIndex().subdivisionsByCode.get(code)?.name ?? null;
}

export function subdivisionTerm(country: string): string {
  return (places.subdivision_terms as Record<string, string | undefined>)[country] ?? 'region';
}

/** Countries whose subdivisions the resolver tracks (US states, Canadian provinces, UK nations, Indian states). */
export function tracksSubdivisions(country: string): boolean {
  return country in places.subdivision_terms;
}
