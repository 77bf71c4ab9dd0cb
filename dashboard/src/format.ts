// Numbers and times for people, in the viewer's language and time zone (the browser's).

const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const percent = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });
const dollars = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD' });
const centsOfDollars = new Intl.NumberFormat(undefined, {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});
const smallDollars = new Intl.NumberFormat(undefined, {
  style: 'currency',
  currency: 'USD',
  maximumSignificantDigits: 2,
});
const seconds = new Intl.NumberFormat(undefined, {
  style: 'unit',
  unit: 'second',
  unitDisplay: 'short',
  maximumFractionDigits: 1,
});
const minutes = new Intl.NumberFormat(undefined, {
  style: 'unit',
  unit: 'minute',
  unitDisplay: 'short',
  maximumFractionDigits: 1,
});
const bytes = new Intl.NumberFormat(undefined, {
  notation: 'compact',
  style: 'unit',
  unit: 'byte',
  unitDisplay: 'narrow',
  maximumFractionDigits: 1,
});
// A long time style names the time zone ("6:51:02 PM UTC"); the styles take no other option beside them.
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'long' });
const timeOfDay = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });
const hour = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
const hourTick = new Intl.DateTimeFormat(undefined, { hour: 'numeric' });
const shortSeconds = new Intl.NumberFormat(undefined, {
  style: 'unit',
  unit: 'second',
  unitDisplay: 'short',
  maximumSignificantDigits: 2,
});

/** What an absent value reads as. */
export const NONE = '—';

export const formatCount = (value: number) => integer.format(value);

/** A fraction (0.5) as a percentage (50%). */
export const formatPercent = (value: number) => percent.format(value);

const points = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1, signDisplay: 'exceptZero' });

/** A difference of two rates (0.04) in signed percentage points (+4 pts). */
export const formatPoints = (value: number) => `${points.format(value * 100)} pts`;

/**
 * US dollars: cents from a dollar up, up to four decimals below it (a task's cost is often a few cents),
 * and two significant digits below a hundredth of a cent (micro-dollar costs).
 */
export function formatUsd(value: number): string {
  const size = Math.abs(value);
  if (size >= 1 || value === 0) return dollars.format(value);
  return size >= 0.0001 ? centsOfDollars.format(value) : smallDollars.format(value);
}

/** A duration given in seconds. */
export const formatSeconds = (value: number) =>
  value < 10 ? shortSeconds.format(value) : value < 120 ? seconds.format(value) : minutes.format(value / 60);

/** A duration given in milliseconds: milliseconds under a second, else as formatSeconds. */
export const formatMilliseconds = (value: number) =>
  value < 1000 ? `${integer.format(value)} ms` : formatSeconds(value / 1000);

export const formatBytes = (value: number) => bytes.format(value);

/** A date and time with the viewer's time zone, e.g. "25 Nov 2026, 18:51:02 UTC". */
export const formatDateTime = (iso: string | Date) =>
  dateTime.format(typeof iso === 'string' ? new Date(iso) : iso);

/** A time of day to the second, e.g. "7:11:02 PM". */
export const formatTime = (iso: string) => timeOfDay.format(new Date(iso));

/** A time of day to the minute, e.g. "7:11 PM". */
export const formatHour = (date: Date) => hour.format(date);

/** An hour of the day for a chart's axis, e.g. "4 PM". */
export const formatHourTick = (date: Date) => hourTick.format(date);

/** A p-value as people read it: three significant digits, "< 0.001" below that. */
export function formatPValue(value: number): string {
  if (value < 0.001) return '< 0.001';
  return new Intl.NumberFormat(undefined, { maximumSignificantDigits: 3 }).format(value);
}

/** The viewer's time zone, named as the page shows it. */
export const timeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** A role as a heading: the C-suite in capitals, registered roles as they are. */
export const roleLabel = (role: string, displayName?: string | null) =>
  displayName ?? (role.length <= 4 ? role.toUpperCase() : role);
