import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Fanout } from '../../src/events/fanout.js';
import type { BusEvent } from '../../src/events/topics.js';

const tenantId = randomUUID();
const paused = (eventId: string = randomUUID(), tenant = tenantId): BusEvent => ({
  eventId,
  type: 'DOGFOOD_AGENT_PAUSED',
  tenantId: tenant,
  payload: {},
});
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Resolves once every listener has been called `count` times (the fan-out is done with those events). */
function recorder(fanout: Fanout, listeners: number, options: { gaps?: ((id: string) => boolean)[] } = {}) {
  const received: string[][] = Array.from({ length: listeners }, () => []);
  const stops = received.map((events) =>
    fanout.listen(
      ['DOGFOOD_AGENT_PAUSED'],
      tenantId,
      (event) => events.push(event.eventId),
      (delivered) => options.gaps?.push(delivered),
    ),
  );
  return { received, stops };
}

async function settled(): Promise<void> {
  // Each turn delivers at least one slice; a few turns more than the slices used here is enough.
  for (let turn = 0; turn < 20; turn++) await nextTurn();
}

describe('event fan-out', () => {
  it('calls one slice of listeners at once and the next ones in later turns of the event loop', async () => {
    const fanout = new Fanout({ slice: 2 });
    const { received } = recorder(fanout, 5);
    fanout.dispatch(paused('e1'));
    expect(received.map((events) => events.length)).toEqual([1, 1, 0, 0, 0]);
    await settled();
    expect(received).toEqual([['e1'], ['e1'], ['e1'], ['e1'], ['e1']]);
  });

  it('delivers events in arrival order to every listener when one arrives during a delivery', async () => {
    const fanout = new Fanout({ slice: 2 });
    const { received } = recorder(fanout, 5);
    fanout.dispatch(paused('e1'));
    fanout.dispatch(paused('e2'));
    await settled();
    expect(received).toEqual(Array.from({ length: 5 }, () => ['e1', 'e2']));
  });

  it('hands a repeated event id only to listeners added after its first publication', async () => {
    const fanout = new Fanout();
    const early = recorder(fanout, 1).received[0];
    fanout.dispatch(paused('e1'));
    const late = recorder(fanout, 1).received[0];
    fanout.dispatch(paused('e1'));
    fanout.dispatch(paused('e1'));
    await settled();
    expect(early).toEqual(['e1']);
    expect(late).toEqual(['e1']);
  });

  it('remembers a bounded number of event ids for the whole instance, not per listener', async () => {
    const fanout = new Fanout({ rememberedIds: 2 });
    const { received } = recorder(fanout, 3);
    for (const id of ['e1', 'e2', 'e1', 'e3', 'e1']) fanout.dispatch(paused(id));
    await settled();
    // e1 was forgotten once e2 and e3 came: its third publication is delivered again (at least once).
    expect(received).toEqual(Array.from({ length: 3 }, () => ['e1', 'e2', 'e3', 'e1']));
  });

  it('calls no listener of another tenant or type, nor one added after the event arrived', async () => {
    const fanout = new Fanout({ slice: 1 });
    const { received } = recorder(fanout, 2);
    const resumed: string[] = [];
    fanout.listen(['DOGFOOD_AGENT_RESUMED'], tenantId, (event) => resumed.push(event.eventId));
    fanout.dispatch(paused('other', randomUUID()));
    fanout.dispatch(paused('e1'));
    const added = recorder(fanout, 1).received[0];
    await settled();
    expect(received).toEqual([['e1'], ['e1']]);
    expect(resumed).toEqual([]);
    expect(added).toEqual([]);
  });

  it('stops calling a listener removed during a delivery, and forgets it', async () => {
    const fanout = new Fanout({ slice: 1 });
    const { received, stops } = recorder(fanout, 3);
    fanout.dispatch(paused('e1'));
    for (const stop of stops.slice(1)) stop();
    await settled();
    expect(received).toEqual([['e1'], [], []]);
    expect(fanout.size).toBe(1);
    stops[0]?.();
    expect(fanout.size).toBe(0);
  });

  it('tells each listener after the events before a gap which of them reached it', async () => {
    const fanout = new Fanout();
    fanout.dispatch(paused('before-listening'));
    const gaps: ((id: string) => boolean)[] = [];
    const { received } = recorder(fanout, 1, { gaps });
    fanout.dispatch(paused('e1'));
    fanout.gap();
    fanout.dispatch(paused('e2'));
    await settled();
    expect(received[0]).toEqual(['e1', 'e2']);
    expect(gaps).toHaveLength(1);
    const delivered = gaps[0] as (id: string) => boolean;
    expect(['before-listening', 'e1', 'e2', 'unknown'].map(delivered)).toEqual([false, true, false, false]);
  });
});
