import { describe, expect, it } from 'vitest';
import { companyNameOf } from '../../../src/domain/hiring/company.js';

describe('companyNameOf', () => {
  it.each([
    [{ company_name: 'Acme Robotics' }],
    [{ companyName: 'Acme Robotics' }],
    [{ company: 'Acme Robotics' }],
    [{ company: { name: 'Acme Robotics', cost_center: 'CC-9' } }],
    [{ employer: { legal_name: 'Acme Robotics', name: 'Acme' } }],
    [{ employer_name: '  Acme\n Robotics ' }],
  ])('reads the employer from %j', (jobDesign) => {
    expect(companyNameOf(jobDesign)).toBe('Acme Robotics');
  });

  it('prefers company_name over company', () => {
    expect(companyNameOf({ company: 'Acme', company_name: 'Acme Robotics Ltd' })).toBe('Acme Robotics Ltd');
  });

  it('skips a blank name for the next key', () => {
    expect(companyNameOf({ company_name: '  ', company: 'Acme Robotics' })).toBe('Acme Robotics');
  });

  it.each([
    [{}],
    [{ company: 42 }],
    [{ company: ['Acme'] }],
    [{ company: { id: 'c-1' } }],
    [{ title: 'Engineer' }],
  ])('finds no employer in %j', (jobDesign) => {
    expect(companyNameOf(jobDesign)).toBeNull();
  });

  it('caps a name at 200 characters', () => {
    expect(companyNameOf({ company: 'A'.repeat(500) })).toHaveLength(200);
  });
});
