import { describe, expect, it } from 'vitest';
import { readJobDesign } from '../../../src/domain/hiring/job-design.js';

describe('readJobDesign', () => {
  it.each([
    [{ title: 'Data Engineer' }],
    [{ job_title: 'Data Engineer' }],
    [{ jobTitle: 'Data Engineer' }],
    [{ role: 'Data Engineer' }],
    [{ role: { title: 'Data Engineer', level: 'L5' } }],
    [{ position: '  Data   Engineer ' }],
  ])('reads the title from %j', (jobDesign) => {
    expect(readJobDesign(jobDesign).title).toBe('Data Engineer');
  });

  it.each([
    [{ department: 'Platform' }, 'Platform'],
    [{ team: 'Platform' }, 'Platform'],
    [{ department: { name: 'Platform', cost_center: 'CC-12' } }, 'Platform'],
  ])('reads the department from %j', (jobDesign, expected) => {
    expect(readJobDesign(jobDesign).department).toBe(expected);
  });

  it.each([
    [{ reports_to: 'Grace Hopper' }, 'Grace Hopper'],
    [{ reporting_line: 'VP Engineering' }, 'VP Engineering'],
    [
      { manager: { name: 'Grace Hopper', title: 'VP Engineering', notes: 'tough' } },
      'Grace Hopper, VP Engineering',
    ],
  ])('reads the reporting line from %j', (jobDesign, expected) => {
    expect(readJobDesign(jobDesign).reportsTo).toBe(expected);
  });

  it.each([
    [
      { responsibilities: ['Build pipelines', '  Own data quality '] },
      ['Build pipelines', 'Own data quality'],
    ],
    [{ responsibilities: '- Build pipelines\n- Own data quality' }, ['Build pipelines', 'Own data quality']],
    [{ duties: '1. Build pipelines; 2. Own data quality' }, ['Build pipelines', 'Own data quality']],
    [
      { responsibilities: [{ description: 'Build pipelines', internal_score: 3 }, 7] },
      ['Build pipelines', '7'],
    ],
    [{ responsibilities: '3D modelling' }, ['3D modelling']],
  ])('reads responsibilities from %j', (jobDesign, expected) => {
    expect(readJobDesign(jobDesign).responsibilities).toEqual(expected);
  });

  it.each([
    ['full_time', 'full_time', 'Full-time'],
    ['Full-Time', 'full_time', 'Full-time'],
    ['part_time', 'part_time', 'Part-time'],
    ['contract', 'fixed_term', 'Fixed-term contract'],
    ['contractor', 'contractor', 'Independent contractor'],
    ['internship', 'internship', 'Internship'],
    ['secondment', 'other', 'Secondment'],
  ])('maps the employment type %j', (value, key, label) => {
    expect(readJobDesign({ employment_type: value }).employmentType).toEqual({ key, label });
  });

  it.each([
    ['2027-01-11', '2027-01-11'],
    ['2027-01-11T09:00:00Z', '2027-01-11'],
    ['2027-02-30', null],
    ['next Monday', null],
  ])('reads the start date %j as %j', (value, expected) => {
    expect(readJobDesign({ start_date: value }).startDate).toBe(expected);
  });

  it('returns empty details for an empty job design', () => {
    expect(readJobDesign({})).toEqual({
      title: null,
      department: null,
      responsibilities: [],
      reportsTo: null,
      employmentType: null,
      startDate: null,
      hoursPerWeek: null,
      benefits: [],
    });
  });

  it('reads nothing from keys outside the allow-list', () => {
    const details = readJobDesign({ budget: 1, internal_title: 'x', notes: 'y', headcount_plan: 'z' });
    expect(Object.values(details).flat().filter(Boolean)).toEqual([]);
  });
});
