import { describe, expect, it } from 'vitest';
import { resolveLocation } from '../../../src/domain/hiring/location.js';

describe('resolveLocation', () => {
  it.each([
    ['San Francisco, CA', 'US', 'US-CA', 'San Francisco, California, United States'],
    ['California, USA', 'US', 'US-CA', 'California, United States'],
    ['CA, US', 'US', 'US-CA', 'California, United States'],
    ['New York, NY', 'US', 'US-NY', 'New York City, New York, United States'],
    ['NYC', 'US', 'US-NY', 'New York City, New York, United States'],
    ['Austin, Texas', 'US', 'US-TX', 'Austin, Texas, United States'],
    ['Seattle, WA, United States', 'US', 'US-WA', 'Seattle, Washington, United States'],
    ['Denver, Colorado', 'US', 'US-CO', 'Denver, Colorado, United States'],
    ['Chicago, IL', 'US', 'US-IL', 'Chicago, Illinois, United States'],
    ['Boston, MA', 'US', 'US-MA', 'Boston, Massachusetts, United States'],
    ['London, UK', 'GB', 'GB-ENG', 'London, England, United Kingdom'],
    ['Manchester, England', 'GB', 'GB-ENG', 'Manchester, England, United Kingdom'],
    ['United Kingdom', 'GB', null, 'United Kingdom'],
    ['GB', 'GB', null, 'United Kingdom'],
    ['Berlin, Germany', 'DE', null, 'Berlin, Germany'],
    ['München, Deutschland', 'DE', null, 'Munich, Germany'],
    ['DE', 'DE', null, 'Germany'],
    ['Paris, France', 'FR', null, 'Paris, France'],
    ['FR', 'FR', null, 'France'],
    ['Toronto, Ontario, Canada', 'CA', 'CA-ON', 'Toronto, Ontario, Canada'],
    ['Vancouver, BC', 'CA', 'CA-BC', 'Vancouver, British Columbia, Canada'],
    ['Canada', 'CA', null, 'Canada'],
    ['Mumbai, India', 'IN', 'IN-MH', 'Mumbai, Maharashtra, India'],
    ['Bengaluru, Karnataka, India', 'IN', 'IN-KA', 'Bengaluru, Karnataka, India'],
    ['IN', 'IN', null, 'India'],
    ['US-CA', 'US', 'US-CA', 'California, United States'],
    ['CA-ON', 'CA', 'CA-ON', 'Ontario, Canada'],
  ])('resolves %j to %s / %s', (input, country, subdivision, label) => {
    expect(resolveLocation(input)).toMatchObject({ resolved: true, country, subdivision, label, input });
  });

  it.each([
    ['USA', 'US', null],
    ['U.S.', 'US', null],
    ['United States of America', 'US', null],
    ['Great Britain', 'GB', null],
    ['England', 'GB', 'GB-ENG'],
    ['Scotland', 'GB', 'GB-SCT'],
    ['Wales', 'GB', 'GB-WLS'],
    ['Northern Ireland', 'GB', 'GB-NIR'],
    ['Deutschland', 'DE', null],
    ['Allemagne', 'DE', null],
    ['Japan', 'JP', null],
    ['the Netherlands', 'NL', null],
  ])('maps the country name or alias %j to %s', (input, country, subdivision) => {
    expect(resolveLocation(input)).toMatchObject({ resolved: true, country, subdivision });
  });

  it.each([
    ['Texas', 'US-TX'],
    ['TX', 'US-TX'],
    ['District of Columbia', 'US-DC'],
    ['Washington, DC', 'US-DC'],
    ['Wyoming', 'US-WY'],
    ['Quebec', 'CA-QC'],
    ['ON', 'CA-ON'],
    ['Prince Edward Island', 'CA-PE'],
    ['Yukon', 'CA-YT'],
    ['IN-KA', 'IN-KA'],
  ])('recognises the subdivision %j as %s', (input, subdivision) => {
    expect(resolveLocation(input).subdivision).toBe(subdivision);
  });

  it.each([
    ['Austin TX', 'US-TX', 'Austin, Texas, United States'],
    ['New York NY', 'US-NY', 'New York City, New York, United States'],
    ['Berlin Germany', null, 'Berlin, Germany'],
  ])('splits %j written without commas', (input, subdivision, label) => {
    expect(resolveLocation(input)).toMatchObject({ resolved: true, subdivision, label });
  });

  it.each([
    ['San Francisco, CA 94105', 'San Francisco, California, United States'],
    ['123 Main St, Springfield, IL 62701', 'Springfield, Illinois, United States'],
    ['Remote - US', 'United States'],
    ['Paris (hybrid)', 'Paris, France'],
  ])('ignores postcodes, street numbers and work-arrangement words in %j', (input, label) => {
    expect(resolveLocation(input).label).toBe(label);
  });

  it.each([
    ['Toronto, CA', 'CA', 'CA-ON'],
    ['Ontario, CA', 'CA', 'CA-ON'],
    ['Berlin, DE', 'DE', null],
    ['Wilmington, DE', 'US', 'US-DE'],
    ['Mumbai, IN', 'IN', 'IN-MH'],
    ['Indianapolis, IN', 'US', 'US-IN'],
    ['Tel Aviv, IL', 'IL', null],
    ['Amsterdam, NL', 'NL', null],
    ["St. John's, NL", 'CA', 'CA-NL'],
    ['Springfield, CA', 'US', 'US-CA'],
  ])('reads the code after a place in %j by the place it follows', (input, country, subdivision) => {
    expect(resolveLocation(input)).toMatchObject({ country, subdivision });
  });

  it.each([
    ['CA', 'CA', 'California'],
    ['IN', 'IN', 'Indiana'],
    ['DE', 'DE', 'Delaware'],
  ])('reads a bare %j as the ISO country and explains how to write the US state', (input, country, state) => {
    const result = resolveLocation(input);
    expect(result.country).toBe(country);
    expect(result.notes.join(' ')).toContain(state);
  });

  it('reads a bare "Georgia" as the US state and says how to write the country', () => {
    const result = resolveLocation('Georgia');
    expect(result).toMatchObject({ country: 'US', subdivision: 'US-GA' });
    expect(result.notes.join(' ')).toContain('"GE"');
  });

  it.each([
    ['Tbilisi, Georgia', 'GE', null],
    ['Atlanta, Georgia', 'US', 'US-GA'],
    ['Georgia, USA', 'US', 'US-GA'],
    ['GE', 'GE', null],
  ])('reads Georgia in %j from its context', (input, country, subdivision) => {
    expect(resolveLocation(input)).toMatchObject({ country, subdivision });
  });

  it.each([
    ['London', 'GB', 'GB-ENG'],
    ['London, Ontario', 'CA', 'CA-ON'],
    ['Vancouver', 'CA', 'CA-BC'],
    ['Vancouver, WA', 'US', 'US-WA'],
  ])(
    'picks the city %j in the region given, defaulting to the best-known one',
    (input, country, subdivision) => {
      expect(resolveLocation(input)).toMatchObject({ country, subdivision });
    },
  );

  it('keeps an unknown town when its state is known', () => {
    expect(resolveLocation('Smallville, Kansas')).toMatchObject({
      resolved: true,
      country: 'US',
      subdivision: 'US-KS',
      label: 'Smallville, Kansas, United States',
    });
  });

  it('keeps the country when an ISO 3166-2 subdivision code is not on file', () => {
    const result = resolveLocation('US-ZZ');
    expect(result).toMatchObject({ resolved: true, country: 'US', subdivision: null });
    expect(result.notes).toHaveLength(1);
  });

  it.each([['Atlantis'], [''], ['   '], ['Remote'], ['Atlantis, Narnia']])(
    'leaves %j unresolved',
    (input) => {
      expect(resolveLocation(input)).toEqual({
        resolved: false,
        country: null,
        subdivision: null,
        label: input.trim(),
        input,
        notes: [],
      });
    },
  );
});
