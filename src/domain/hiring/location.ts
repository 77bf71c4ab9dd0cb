import {
  type CityEntry,
  countryLabel,
  normalizePlace,
  placeIndex,
  type SubdivisionEntry,
  subdivisionName,
  tracksSubdivisions,
} from './place-index.js';
import type { ResolvedLocation } from './types.js';

interface Segment {
  raw: string;
  key: string;
}

interface Match {
  country: string;
  subdivision: SubdivisionEntry | null;
  city: CityEntry | null;
  locality: string | null;
  notes: string[];
}

const SEPARATORS = /[,;|/()[\]\n]+|\s[-–—]\s/;
const ISO_3166_2 = /^([A-Za-z]{2})-([A-Za-z0-9]{1,3})$/;
const MAX_TAIL_WORDS = 3;

/**
 * Reads a free-text work location such as "San Francisco, CA", "München, Deutschland" or "US-CA".
 *
 * Ambiguities are settled as follows (and explained in `notes`):
 * - a bare two-letter code is an ISO 3166-1 country when it is one ("CA" is Canada, "IN" India, "DE" Germany);
 * - "<place>, XX" where XX is both a country code and a US state or Canadian province code is read as the
 *   state/province ("San Francisco, CA", "Chicago, IL") unless <place> is a known city or subdivision of that
 *   country ("Toronto, CA", "Berlin, DE", "Tel Aviv, IL");
 * - "Georgia" is the US state unless paired with a known Georgian city ("Tbilisi, Georgia") or written "GE".
 */
export function resolveLocation(location: string): ResolvedLocation {
  const segments = splitSegments(location);
  const match = segments.length > 0 ? resolveSegments(segments) : null;
  if (!match) {
    return {
      resolved: false,
      country: null,
      subdivision: null,
      label: location.trim(),
      input: location,
      notes: [],
    };
  }
  const subdivision = match.subdivision ?? subdivisionOfCity(match.city);
  const place = match.city?.name ?? match.locality;
  const parts = [place, subdivision?.name, countryLabel(match.country)].filter(
    (part, index, all): part is string => !!part && all.indexOf(part) === index,
  );
  return {
    resolved: true,
    country: match.country,
    subdivision: subdivision?.code ?? null,
    label: parts.join(', '),
    input: location,
    notes: match.notes,
  };
}

function splitSegments(location: string): Segment[] {
  return location
    .split(SEPARATORS)
    .map((part) => makeSegment(part.replace(/\S*\d\S*/g, ' ')))
    .filter((segment): segment is Segment => segment !== null);
}

function makeSegment(text: string): Segment | null {
  const { ignoredTerms } = placeIndex();
  const words = text.trim().split(/\s+/).filter(Boolean);
  while (words.length > 0 && ignoredTerms.has(normalizePlace(words[0] ?? ''))) words.shift();
  while (words.length > 0 && ignoredTerms.has(normalizePlace(words.at(-1) ?? ''))) words.pop();
  const raw = words.join(' ');
  const key = normalizePlace(raw);
  return key === '' || ignoredTerms.has(key) ? null : { raw, key };
}

function resolveSegments(segments: Segment[]): Match | null {
  const last = segments.at(-1);
  if (!last) return null;
  const rest = segments.slice(0, -1);
  const previous = rest.at(-1);

  const iso = isoSubdivision(last.raw);
  if (iso) return withinRegion(rest, iso.country, iso.subdivision, iso.notes);
  if (!previous) return resolveAlone(last);

  const index = placeIndex();
  const country = index.countries.get(last.key);
  const subdivision = standaloneShortCode(last.key) ?? index.subdivisionsByName.get(last.key);
  if (country && subdivision) {
    if (isCityIn(previous.key, country) || subdivisionWithin(country, previous)) {
      return withinRegion(rest, country, null, []);
    }
    const note = index.bareNameNotes.get(last.key);
    const notes = note && !isCityIn(previous.key, subdivision.country) ? [note.note] : [];
    return withinRegion(rest, subdivision.country, subdivision, notes);
  }
  if (country) return withinRegion(rest, country, null, []);
  if (subdivision) return withinRegion(rest, subdivision.country, subdivision, []);
  const city = index.citiesByKey.get(last.key)?.[0];
  return city ? cityMatch(city, []) : null;
}

function resolveAlone(segment: Segment): Match | null {
  const index = placeIndex();
  const preferred = index.bareNameNotes.get(segment.key);
  if (preferred) return regionMatch(preferred.subdivision.country, preferred.subdivision, [preferred.note]);

  const country = index.countries.get(segment.key);
  if (country) {
    const shadowed = standaloneShortCode(segment.key);
    const notes = shadowed
      ? [
          `"${segment.raw}" on its own was read as ${countryLabel(country)} (ISO 3166-1); ` +
            `write "${shadowed.name}" or "${shadowed.code}" for the ${shadowed.country === 'US' ? 'US state' : 'Canadian province'}.`,
        ]
      : [];
    return regionMatch(country, null, notes);
  }
  const subdivision = index.subdivisionsByName.get(segment.key) ?? standaloneShortCode(segment.key);
  if (subdivision) return regionMatch(subdivision.country, subdivision, []);
  const city = index.citiesByKey.get(segment.key)?.[0];
  if (city) return cityMatch(city, []);
  return splitOnWhitespace(segment);
}

// "Austin TX" or "Berlin Germany": try the longest trailing words that name a region.
function splitOnWhitespace(segment: Segment): Match | null {
  const words = segment.raw.split(/\s+/);
  for (let tailSize = Math.min(MAX_TAIL_WORDS, words.length - 1); tailSize >= 1; tailSize--) {
    const tail = makeSegment(words.slice(-tailSize).join(' '));
    if (!tail || !namesRegion(tail)) continue;
    const head = makeSegment(words.slice(0, -tailSize).join(' '));
    const match = resolveSegments(head ? [head, tail] : [tail]);
    if (match) return match;
  }
  return null;
}

function namesRegion(segment: Segment): boolean {
  const index = placeIndex();
  return (
    isoSubdivision(segment.raw) !== null ||
    index.countries.has(segment.key) ||
    index.subdivisionsByName.has(segment.key) ||
    standaloneShortCode(segment.key) !== undefined
  );
}

function withinRegion(
  rest: Segment[],
  country: string,
  subdivision: SubdivisionEntry | null,
  notes: string[],
): Match {
  const remaining = [...rest];
  let region = subdivision;
  const next = remaining.at(-1);
  if (!region && next) {
    region = subdivisionWithin(country, next) ?? null;
    if (region) remaining.pop();
  }
  const placeSegment = remaining.at(-1);
  if (!placeSegment) return regionMatch(country, region, notes);
  const city = placeIndex()
    .citiesByKey.get(placeSegment.key)
    ?.find((entry) => entry.country === country && (!region || entry.subdivision === region.code));
  if (city) return { ...cityMatch(city, notes), subdivision: region };
  return { country, subdivision: region, city: null, locality: placeSegment.raw, notes };
}

function subdivisionWithin(country: string, segment: Segment): SubdivisionEntry | undefined {
  const index = placeIndex();
  const byName = index.subdivisionsByName.get(segment.key);
  if (byName?.country === country) return byName;
  const iso = isoSubdivision(segment.raw);
  if (iso?.country === country && iso.subdivision) return iso.subdivision;
  if (!/^[a-z]{2,3}$/.test(segment.key)) return undefined;
  return index.subdivisionsByCode.get(`${country}-${segment.key.toUpperCase()}`);
}

function isoSubdivision(
  raw: string,
): { country: string; subdivision: SubdivisionEntry | null; notes: string[] } | null {
  const found = ISO_3166_2.exec(raw.trim());
  if (!found) return null;
  const country = (found[1] ?? '').toUpperCase();
  if (!placeIndex().isoCountries.has(country)) return null;
  const code = `${country}-${(found[2] ?? '').toUpperCase()}`;
  const subdivision = placeIndex().subdivisionsByCode.get(code) ?? null;
  const notes =
    !subdivision && tracksSubdivisions(country)
      ? [`The subdivision code "${code}" is not on file; only the country was used.`]
      : [];
  return { country, subdivision, notes };
}

function standaloneShortCode(key: string): SubdivisionEntry | undefined {
  return key.length === 2 ? placeIndex().standaloneShortCodes.get(key) : undefined;
}

function isCityIn(key: string, country: string): boolean {
  return (
    placeIndex()
      .citiesByKey.get(key)
      ?.some((city) => city.country === country) ?? false
  );
}

function subdivisionOfCity(city: CityEntry | null): SubdivisionEntry | null {
  if (!city?.subdivision) return null;
  const name = subdivisionName(city.subdivision);
  return name ? { code: city.subdivision, country: city.country, name } : null;
}

function regionMatch(country: string, subdivision: SubdivisionEntry | null, notes: string[]): Match {
  return { country, subdivision, city: null, locality: null, notes };
}

function cityMatch(city: CityEntry, notes: string[]): Match {
  return { country: city.country, subdivision: subdivisionOfCity(city), city, locality: null, notes };
}
