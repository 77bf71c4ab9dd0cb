import { describe, expect, it } from 'vitest';
import type { Caller, TestApp } from '../support/app.js';
import { withTestAppAndCaller } from '../support/fixtures.js';

let t: TestApp;
let operator: Caller;
let nextId = 0;

withTestAppAndCaller(['operator'], (made) => ({ t, caller: operator } = made));

function onboardingBody(overrides: Record<string, unknown> = {}) {
  return {
    job_design_data: {
      company_name: 'Acme Robotics',
      job_title: 'Data Engineer',
      department: 'Platform',
      employment_type: 'full_time',
      start_date: '2027-03-01',
      budget: 'DO-NOT-DISCLOSE',
    },
    candidate_name: 'Ada Lovelace',
    salary: { min_amount: 90000, max_amount: 110000, basis: 'annual', currency: 'USD' },
    location: 'Austin, TX',
    ...overrides,
  };
}

function salary(overrides: Record<string, unknown>) {
  return {
    salary: { min_amount: 90000, max_amount: 110000, basis: 'annual', currency: 'USD', ...overrides },
  };
}

/** A path for a candidate no other test uses. */
function onboardPath(processId = `proc-${++nextId}`, candidateId = `cand-${nextId}`) {
  return `/api/v1/hiring/${processId}/onboard/${candidateId}`;
}

function onboard(
  body: unknown,
  options: { caller?: Caller; path?: string; headers?: Record<string, string> } = {},
) {
  return t.rest('POST', options.path ?? onboardPath(), {
    caller: options.caller ?? operator,
    body,
    ...(options.headers ? { headers: options.headers } : {}),
  });
}

async function storedRows(tenantId: string) {
  const [packets, audits] = await Promise.all([
    t.db.prisma.onboardingPacket.count({ where: { tenantId } }),
    t.db.prisma.auditEntry.count({ where: { tenantId, action: 'hiring.onboarding_packet.generate' } }),
  ]);
  return { packets, audits };
}

interface Reminder {
  id: string;
  jurisdiction: string;
  title: string;
}

describe('POST /api/v1/hiring/{process_id}/onboard/{candidate_id}', () => {
  it('answers 200 with the offer letter, checklist and compliance reminders in data, and meta', async () => {
    const response = await onboard(onboardingBody());
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['data', 'meta']);
    expect(Object.keys(response.body.data).sort()).toEqual([
      'checklist',
      'compliance_reminders',
      'offer_letter',
    ]);
    expect(response.body.data.offer_letter).toContain('Dear Ada Lovelace,');
    expect(response.body.data.offer_letter).toContain('On behalf of Acme Robotics');
    expect(response.body.data.offer_letter).toContain('$90,000 – $110,000 per year');
    expect(response.body.data.checklist.items.length).toBeGreaterThan(0);
    expect(response.body.data.compliance_reminders.jurisdiction).toEqual({
      resolved: true,
      country: 'US',
      subdivision: 'US-TX',
      label: 'Austin, Texas, United States',
    });
    expect(response.body.meta).toEqual({
      request_id: response.headers.get('x-request-id'),
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
    });
  });

  it('answers with a chairman token too', async () => {
    const chairman = await t.caller(['chairman']);
    expect((await onboard(onboardingBody(), { caller: chairman })).status).toBe(200);
  });

  it('echoes the X-Request-ID it was sent in the header and in meta.request_id', async () => {
    const response = await onboard(onboardingBody(), { headers: { 'x-request-id': 'hiring-req-42' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('hiring-req-42');
    expect(response.body.meta.request_id).toBe('hiring-req-42');
  });

  it('stamps meta.timestamp with the time the packet was stored', async () => {
    const response = await onboard(onboardingBody());
    const stored = await t.db.prisma.onboardingPacket.findFirstOrThrow({
      where: { tenantId: operator.tenantId, requestId: response.body.meta.request_id },
    });
    expect(response.body.meta.timestamp).toBe(stored.createdAt.toISOString());
  });

  it('passes job_design_data keys through unchanged to the letter', async () => {
    const response = await onboard(
      onboardingBody({
        job_design_data: {
          job_title: 'Site Reliability Engineer',
          start_date: '2027-03-01',
          reports_to: 'Grace Hopper',
        },
      }),
    );
    expect(response.status).toBe(200);
    expect(response.body.data.offer_letter).toContain('Site Reliability Engineer');
    expect(response.body.data.offer_letter).toContain('March 1, 2027');
    expect(response.body.data.offer_letter).toContain('Grace Hopper');
  });

  it('never puts internal job design fields in the letter', async () => {
    const response = await onboard(onboardingBody());
    expect(JSON.stringify(response.body)).not.toContain('DO-NOT-DISCLOSE');
  });

  it('names the employer "The Company" when the job design names none', async () => {
    const response = await onboard(onboardingBody({ job_design_data: { title: 'Data Engineer' } }));
    expect(response.status).toBe(200);
    expect(response.body.data.offer_letter).toContain(
      'On behalf of The Company, we are pleased to offer you',
    );
  });

  it('ignores unknown body fields', async () => {
    const response = await onboard({ ...onboardingBody(), notes: 'ignored' });
    expect(response.status).toBe(200);
  });

  it('accepts path ids made of letters, digits and . _ : -', async () => {
    const response = await onboard(onboardingBody(), {
      path: onboardPath('req:2026.Q4_eng-7', 'cand_01.b:x-9'),
    });
    expect(response.status).toBe(200);
    const stored = await t.db.prisma.onboardingPacket.findFirst({
      where: { tenantId: operator.tenantId, processId: 'req:2026.Q4_eng-7', candidateId: 'cand_01.b:x-9' },
    });
    expect(stored?.generation).toBe(1);
  });

  it('stores one packet and one audit row per generation', async () => {
    const caller = await t.caller(['operator']);
    const path = onboardPath();
    expect((await onboard(onboardingBody(), { caller, path })).status).toBe(200);
    expect((await onboard(onboardingBody({ location: 'Denver, CO' }), { caller, path })).status).toBe(200);
    const rows = await t.db.prisma.onboardingPacket.findMany({
      where: { tenantId: caller.tenantId },
      orderBy: { generation: 'asc' },
    });
    expect(rows.map((row) => [row.generation, row.location])).toEqual([
      [1, 'Austin, TX'],
      [2, 'Denver, CO'],
    ]);
    expect(await storedRows(caller.tenantId)).toEqual({ packets: 2, audits: 2 });
  });
});

describe('compliance reminders by jurisdiction', () => {
  it.each([
    ['US federal (a state without state rules)', 'Portland, Oregon', 'USD', 'US', 'us-new-hire-reporting'],
    ['California', 'San Francisco, CA', 'USD', 'US-CA', 'us-ca-new-hire-de34'],
    ['New York', 'New York, NY', 'USD', 'US-NY', 'us-ny-pay-notice'],
    ['Washington', 'Seattle, WA', 'USD', 'US-WA', 'us-wa-paid-sick-leave-notice'],
    ['Colorado', 'Denver, Colorado', 'USD', 'US-CO', 'us-co-hfwa-notice'],
    ['Illinois', 'Chicago, IL', 'USD', 'US-IL', 'us-il-w4'],
    ['Massachusetts', 'Boston, MA', 'USD', 'US-MA', 'us-ma-new-hire'],
    ['Texas', 'Austin, TX', 'USD', 'US-TX', 'us-tx-new-hire'],
    ['United Kingdom', 'London, UK', 'GBP', 'GB', 'gb-right-to-work'],
    ['Germany', 'Berlin, Germany', 'EUR', 'DE', 'de-nachweis-one-month'],
    ['France', 'Paris, France', 'EUR', 'FR', 'fr-dpae'],
    ['Canada (federal)', 'Canada', 'CAD', 'CA', 'ca-td1'],
    ['Ontario', 'Toronto, ON', 'CAD', 'CA-ON', 'ca-on-esa-poster'],
    ['British Columbia', 'Vancouver, BC', 'CAD', 'CA-BC', 'ca-bc-worker-orientation'],
    ['India', 'Bengaluru, India', 'INR', 'IN', 'in-epf-enrolment'],
  ])('lists the %s reminders for "%s"', async (_name, location, currency, jurisdiction, reminderId) => {
    const response = await onboard(onboardingBody({ location, ...salary({ currency }) }));
    expect(response.status).toBe(200);
    const reminders = response.body.data.compliance_reminders.reminders as Reminder[];
    expect(reminders).toContainEqual(
      expect.objectContaining({ id: reminderId, jurisdiction, title: expect.any(String) }),
    );
    for (const reminder of reminders) {
      expect(['*', jurisdiction, jurisdiction.split('-')[0]]).toContain(reminder.jurisdiction);
    }
  });

  it('replaces the federal new-hire report with the Massachusetts one', async () => {
    const response = await onboard(onboardingBody({ location: 'Boston, MA' }));
    const ids = (response.body.data.compliance_reminders.reminders as Reminder[]).map(
      (reminder) => reminder.id,
    );
    expect(ids).toContain('us-ma-new-hire');
    expect(ids).not.toContain('us-new-hire-reporting');
  });

  it('turns each reminder into a checklist item', async () => {
    const response = await onboard(
      onboardingBody({ location: 'Toronto, ON', ...salary({ currency: 'CAD' }) }),
    );
    const reminderIds = (response.body.data.compliance_reminders.reminders as Reminder[]).map(
      (reminder) => reminder.id,
    );
    const fromReminders = (response.body.data.checklist.items as { reminder_id: string | null }[]).flatMap(
      (item) => (item.reminder_id ? [item.reminder_id] : []),
    );
    expect(fromReminders.sort()).toEqual(reminderIds.sort());
  });
});

describe('reading the location', () => {
  it.each([
    ['a city and state name', 'Denver, Colorado', 'US-CO'],
    ['a city and state code', 'Chicago, IL', 'US-IL'],
    ['an ISO 3166-2 code', 'US-NY', 'US-NY'],
    ['a lower-case state code', 'ny', 'US-NY'],
    ['a city alone', 'Seattle', 'US-WA'],
    ['a local city name', 'München', null],
    ['a province code with its country', 'Karnataka, IN', 'IN-KA'],
  ])('resolves %s ("%s")', async (_way, location, subdivision) => {
    const response = await onboard(onboardingBody({ location }));
    expect(response.status).toBe(200);
    expect(response.body.data.compliance_reminders.jurisdiction).toMatchObject({
      resolved: true,
      subdivision,
    });
  });

  it('reads a bare "CA" as Canada and says so', async () => {
    const response = await onboard(onboardingBody({ location: 'CA' }));
    expect(response.body.data.compliance_reminders.jurisdiction).toMatchObject({
      country: 'CA',
      subdivision: null,
    });
    expect(response.body.data.compliance_reminders.notes[0]).toContain('"CA" on its own was read as Canada');
  });

  it('answers 200 with the general reminders for a place it cannot resolve, and says so', async () => {
    const response = await onboard(onboardingBody({ location: 'Atlantis' }));
    expect(response.status).toBe(200);
    const compliance = response.body.data.compliance_reminders;
    expect(compliance.jurisdiction).toEqual({
      resolved: false,
      country: null,
      subdivision: null,
      label: 'Atlantis',
    });
    expect((compliance.reminders as Reminder[]).every((reminder) => reminder.jurisdiction === '*')).toBe(
      true,
    );
    expect(compliance.notes[0]).toContain('"Atlantis" could not be resolved');
  });
});

describe('authorization', () => {
  it('answers 401 with WWW-Authenticate without a token', async () => {
    const response = await t.rest('POST', onboardPath(), { body: onboardingBody() });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });

  it.each([['member'], ['agent']] as const)(
    'answers 403 to a %s before looking at the body',
    async (role) => {
      const caller = await t.caller([role]);
      const response = await onboard({}, { caller });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ detail: 'Not allowed for your role' });
      expect(await storedRows(caller.tenantId)).toEqual({ packets: 0, audits: 0 });
    },
  );
});

describe('validation (422)', () => {
  it('answers 422 for a missing body', async () => {
    const response = await t.rest('POST', onboardPath(), { caller: operator });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }],
    });
  });

  it.each([['job_design_data'], ['candidate_name'], ['salary'], ['location']])(
    'requires %s',
    async (field) => {
      const body: Record<string, unknown> = onboardingBody();
      delete body[field];
      const response = await onboard(body);
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([
        { type: 'missing', loc: ['body', field], msg: 'Field required', input: expect.any(Object) },
      ]);
    },
  );

  it.each([
    ['salary.min_amount', salary({ min_amount: undefined }), ['body', 'salary', 'min_amount']],
    ['salary.max_amount', salary({ max_amount: undefined }), ['body', 'salary', 'max_amount']],
    ['salary.basis', salary({ basis: undefined }), ['body', 'salary', 'basis']],
    ['salary.currency', salary({ currency: undefined }), ['body', 'salary', 'currency']],
  ])('requires %s', async (_field, overrides, loc) => {
    const response = await onboard(onboardingBody(overrides));
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ type: 'missing', loc })]);
  });

  it.each([
    ['job_design_data as a list', { job_design_data: ['title'] }, ['body', 'job_design_data'], 'dict_type'],
    [
      'job_design_data as text',
      { job_design_data: 'Data Engineer' },
      ['body', 'job_design_data'],
      'dict_type',
    ],
    ['job_design_data as null', { job_design_data: null }, ['body', 'job_design_data'], 'dict_type'],
    ['candidate_name as a number', { candidate_name: 42 }, ['body', 'candidate_name'], 'string_type'],
    ['salary as text', { salary: '100000 USD' }, ['body', 'salary'], 'model_attributes_type'],
    [
      'salary.min_amount as text',
      salary({ min_amount: '90000' }),
      ['body', 'salary', 'min_amount'],
      'float_type',
    ],
    [
      'salary.max_amount as a boolean',
      salary({ max_amount: true }),
      ['body', 'salary', 'max_amount'],
      'float_type',
    ],
    ['salary.currency as a number', salary({ currency: 840 }), ['body', 'salary', 'currency'], 'string_type'],
    ['location as an object', { location: { city: 'Austin' } }, ['body', 'location'], 'string_type'],
  ])('refuses %s', async (_case, overrides, loc, type) => {
    const response = await onboard(onboardingBody(overrides));
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ type, loc })]);
  });

  it('refuses a negative salary.min_amount', async () => {
    const response = await onboard(onboardingBody(salary({ min_amount: -1 })));
    expect(response.status).toBe(422);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "ctx": {
              "ge": 0,
            },
            "input": -1,
            "loc": [
              "body",
              "salary",
              "min_amount",
            ],
            "msg": "Input should be greater than or equal to 0",
            "type": "greater_than_equal",
          },
        ],
      }
    `);
  });

  it('refuses a salary.max_amount below min_amount at ["body","salary","max_amount"]', async () => {
    const response = await onboard(onboardingBody(salary({ min_amount: 120000, max_amount: 100000 })));
    expect(response.status).toBe(422);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "ctx": {
              "error": "maximum amount must be greater than or equal to the minimum amount (120000)",
            },
            "input": 100000,
            "loc": [
              "body",
              "salary",
              "max_amount",
            ],
            "msg": "Value error, maximum amount must be greater than or equal to the minimum amount (120000)",
            "type": "value_error",
          },
        ],
      }
    `);
  });

  it('accepts a salary.max_amount equal to min_amount', async () => {
    const response = await onboard(onboardingBody(salary({ min_amount: 100000, max_amount: 100000 })));
    expect(response.status).toBe(200);
    expect(response.body.data.offer_letter).toContain('will be $100,000 per year');
  });

  it('refuses a salary.basis outside annual, monthly and hourly', async () => {
    const response = await onboard(onboardingBody(salary({ basis: 'yearly' })));
    expect(response.status).toBe(422);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "ctx": {
              "expected": "'annual', 'monthly' or 'hourly'",
            },
            "input": "yearly",
            "loc": [
              "body",
              "salary",
              "basis",
            ],
            "msg": "Input should be 'annual', 'monthly' or 'hourly'",
            "type": "enum",
          },
        ],
      }
    `);
  });

  it.each([['XYZ'], ['US'], ['EURO'], ['']])(
    'refuses %j as a salary.currency that is not ISO 4217',
    async (currency) => {
      const response = await onboard(onboardingBody(salary({ currency })));
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([
        expect.objectContaining({ type: 'value_error', loc: ['body', 'salary', 'currency'] }),
      ]);
    },
  );

  it('explains a currency that is not ISO 4217', async () => {
    const response = await onboard(onboardingBody(salary({ currency: 'BTC' })));
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "ctx": {
              "error": "currency must be an ISO 4217 code such as USD, EUR or GBP",
            },
            "input": "BTC",
            "loc": [
              "body",
              "salary",
              "currency",
            ],
            "msg": "Value error, currency must be an ISO 4217 code such as USD, EUR or GBP",
            "type": "value_error",
          },
        ],
      }
    `);
  });

  it('reads a lower-case ISO 4217 code in upper case', async () => {
    const response = await onboard(
      onboardingBody({ location: 'Berlin, Germany', ...salary({ currency: 'eur' }) }),
    );
    expect(response.status).toBe(200);
    expect(response.body.data.offer_letter).toContain('(EUR)');
  });

  it.each([
    ['an empty candidate_name', { candidate_name: '' }, ['body', 'candidate_name'], 'string_too_short'],
    ['a blank candidate_name', { candidate_name: '   ' }, ['body', 'candidate_name'], 'string_too_short'],
    [
      'a candidate_name over 200 characters',
      { candidate_name: 'A'.repeat(201) },
      ['body', 'candidate_name'],
      'string_too_long',
    ],
    ['an empty location', { location: '' }, ['body', 'location'], 'string_too_short'],
    [
      'a location over 200 characters',
      { location: 'x'.repeat(201) },
      ['body', 'location'],
      'string_too_long',
    ],
  ])('refuses %s', async (_case, overrides, loc, type) => {
    const response = await onboard(onboardingBody(overrides));
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ type, loc })]);
  });

  it('accepts a candidate_name of exactly 200 characters', async () => {
    expect((await onboard(onboardingBody({ candidate_name: 'A'.repeat(200) }))).status).toBe(200);
  });

  it('refuses a process_id with a character outside [A-Za-z0-9._:-]', async () => {
    const response = await onboard(onboardingBody(), { path: onboardPath('proc%20one', 'cand-1') });
    expect(response.status).toBe(422);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "ctx": {
              "pattern": "^[A-Za-z0-9._:-]+$",
            },
            "input": "proc one",
            "loc": [
              "path",
              "process_id",
            ],
            "msg": "String should match pattern '^[A-Za-z0-9._:-]+$'",
            "type": "string_pattern_mismatch",
          },
        ],
      }
    `);
  });

  it.each([
    [
      'a process_id over 128 characters',
      onboardPath('p'.repeat(129), 'cand-1'),
      ['path', 'process_id'],
      'string_too_long',
    ],
    [
      'a process_id with a slash',
      onboardPath('team%2Fproc', 'cand-1'),
      ['path', 'process_id'],
      'string_pattern_mismatch',
    ],
    [
      'a candidate_id over 128 characters',
      onboardPath('proc-1', 'c'.repeat(129)),
      ['path', 'candidate_id'],
      'string_too_long',
    ],
    [
      'a candidate_id with a character outside the set',
      onboardPath('proc-1', 'cand%241'),
      ['path', 'candidate_id'],
      'string_pattern_mismatch',
    ],
  ])('refuses %s', async (_case, path, loc, type) => {
    const response = await onboard(onboardingBody(), { path });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ type, loc })]);
  });

  it('accepts path ids of exactly 128 characters', async () => {
    expect(
      (await onboard(onboardingBody(), { path: onboardPath('p'.repeat(128), 'c'.repeat(128)) })).status,
    ).toBe(200);
  });

  it('reports every broken rule of a body at once', async () => {
    const response = await onboard({
      candidate_name: '',
      salary: { min_amount: -5, max_amount: 1, basis: 'weekly', currency: 'usd!' },
    });
    expect(response.status).toBe(422);
    expect((response.body.detail as { loc: unknown[] }[]).map((item) => item.loc)).toEqual([
      ['body', 'job_design_data'],
      ['body', 'candidate_name'],
      ['body', 'salary', 'min_amount'],
      ['body', 'salary', 'basis'],
      ['body', 'salary', 'currency'],
      ['body', 'location'],
    ]);
  });

  it('stores nothing after a 422', async () => {
    const caller = await t.caller(['operator']);
    const responses = await Promise.all([
      onboard(onboardingBody({ candidate_name: '' }), { caller }),
      onboard(onboardingBody(salary({ min_amount: 10, max_amount: 5 })), { caller }),
      onboard(onboardingBody(salary({ currency: 'XYZ' })), { caller }),
      onboard(onboardingBody(), { caller, path: onboardPath('bad id', 'cand-1') }),
    ]);
    expect(responses.map((response) => response.status)).toEqual([422, 422, 422, 422]);
    expect(await storedRows(caller.tenantId)).toEqual({ packets: 0, audits: 0 });
  });
});

describe('OpenAPI', () => {
  it('documents the onboarding route', async () => {
    const response = await t.rest('GET', '/api/v1/openapi.json');
    expect(Object.keys(response.body.paths)).toContain('/api/v1/hiring/{process_id}/onboard/{candidate_id}');
  });
});
