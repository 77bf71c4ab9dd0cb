import { variantAssigner, type WeightedVariant } from './assignment.js';

/** One exposure of a subject, optionally with its conversion, as a client reports it. */
export interface SubjectEvent {
  subjectId: string;
  /** The variant the client showed; omitted, the sticky assignment decides. */
  variantId?: string | null | undefined;
  converted?: boolean | null | undefined;
}

/** What the database already holds for a subject of the test. */
export interface StoredSubject {
  variantId: string;
  converted: boolean;
}

export type EventOutcome =
  | 'new_observation'
  | 'new_success'
  | 'new_observation_and_success'
  | 'repeat'
  | 'variant_mismatch';

export interface EventPlan {
  /** Subjects seen for the first time, with the variant they are assigned and whether they converted. */
  inserts: { subjectId: string; variantId: string; converted: boolean }[];
  /** Known, not yet converted subjects whose conversion this batch reports. */
  conversions: string[];
  /** One outcome per event, in order. */
  outcomes: EventOutcome[];
}

/**
 * Decides what a batch of events changes, as if the events were applied one after the other: a subject is
 * an observation once and a success at most once. The first assignment of a subject wins: an event that
 * names a different variant than the subject already has (stored, or set by an earlier event of the same
 * batch) changes nothing and is reported as a variant mismatch.
 */
export function planEvents(
  testId: string,
  variants: readonly WeightedVariant[],
  stored: ReadonlyMap<string, StoredSubject>,
  events: readonly SubjectEvent[],
): EventPlan {
  const current = new Map<string, StoredSubject & { isNew: boolean }>();
  const conversions = new Set<string>();
  // Worked out once per batch, and only for a batch with a subject to assign.
  let assigner: ((subjectId: string) => string) | undefined;
  const assign = (subjectId: string) => {
    assigner ??= variantAssigner(testId, variants);
    return assigner(subjectId);
  };
  const outcomes = events.map((event): EventOutcome => {
    const converted = event.converted === true;
    const known = current.get(event.subjectId) ?? fromStore(stored.get(event.subjectId));
    if (!known) {
      const variantId = event.variantId ?? assign(event.subjectId);
      current.set(event.subjectId, { variantId, converted, isNew: true });
      return converted ? 'new_observation_and_success' : 'new_observation';
    }
    current.set(event.subjectId, known);
    if (event.variantId != null && event.variantId !== known.variantId) return 'variant_mismatch';
    if (!converted || known.converted) return 'repeat';
    known.converted = true;
    if (!known.isNew) conversions.add(event.subjectId);
    return 'new_success';
  });
  const inserts = [...current.entries()]
    .filter(([, subject]) => subject.isNew)
    .map(([subjectId, { variantId, converted }]) => ({ subjectId, variantId, converted }));
  return { inserts, conversions: [...conversions], outcomes };
}

function fromStore(subject: StoredSubject | undefined): (StoredSubject & { isNew: boolean }) | undefined {
  return subject ? { ...subject, isNew: false } : undefined;
}
