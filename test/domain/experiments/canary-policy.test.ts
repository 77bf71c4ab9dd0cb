import { describe, expect, it } from 'vitest';
import { canaryRolloutPolicySchema } from '../../../src/domain/experiments/canary-policy.js';
import { toValidationDetail } from '../../../src/validation/pydantic.js';

const policy = {
  guardrails: [
    { metric: 'failure_rate', direction: 'lower_is_better', tolerance: 0.02 },
    { metric: 'outcome_accuracy', direction: 'higher_is_better', tolerance: 0.05 },
  ],
  minimumTasks: 200,
  maxDurationSeconds: 86_400,
  action: 'rollback_automatically',
};

/** The 422 items a policy would get, as GraphQL and REST report them. */
function problems(input: unknown) {
  const result = canaryRolloutPolicySchema.safeParse(input, { reportInput: true });
  return result.success ? [] : toValidationDetail(result.error.issues, canaryRolloutPolicySchema, input);
}

const withGuardrail = (guardrail: Record<string, unknown>) => ({
  ...policy,
  guardrails: [{ ...policy.guardrails[0], ...guardrail }],
});

describe('canaryRolloutPolicySchema', () => {
  it('accepts a policy within the rules', () => {
    expect(canaryRolloutPolicySchema.parse(policy)).toEqual(policy);
  });

  it('accepts tolerances of exactly 0 and 1', () => {
    expect(problems(withGuardrail({ tolerance: 0 }))).toEqual([]);
    expect(problems(withGuardrail({ tolerance: 1 }))).toEqual([]);
  });

  it('refuses a tolerance above 1', () => {
    expect(problems(withGuardrail({ tolerance: 1.5 }))).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "le": 1,
          },
          "input": 1.5,
          "loc": [
            "guardrails",
            0,
            "tolerance",
          ],
          "msg": "Input should be less than or equal to 1",
          "type": "less_than_equal",
        },
      ]
    `);
  });

  it('refuses a negative tolerance', () => {
    expect(problems(withGuardrail({ tolerance: -0.1 }))).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "ge": 0,
          },
          "input": -0.1,
          "loc": [
            "guardrails",
            0,
            "tolerance",
          ],
          "msg": "Input should be greater than or equal to 0",
          "type": "greater_than_equal",
        },
      ]
    `);
  });

  it('refuses an unknown metric', () => {
    expect(problems(withGuardrail({ metric: 'latency' }))).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "expected": "'failure_rate', 'acceptance_rate' or 'outcome_accuracy'",
          },
          "input": "latency",
          "loc": [
            "guardrails",
            0,
            "metric",
          ],
          "msg": "Input should be 'failure_rate', 'acceptance_rate' or 'outcome_accuracy'",
          "type": "enum",
        },
      ]
    `);
  });

  it('refuses an unknown direction', () => {
    expect(problems(withGuardrail({ direction: 'up' }))).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "expected": "'higher_is_better' or 'lower_is_better'",
          },
          "input": "up",
          "loc": [
            "guardrails",
            0,
            "direction",
          ],
          "msg": "Input should be 'higher_is_better' or 'lower_is_better'",
          "type": "enum",
        },
      ]
    `);
  });

  it('refuses a metric guarded twice', () => {
    const twice = {
      ...policy,
      guardrails: [policy.guardrails[0], { ...policy.guardrails[0], tolerance: 0.1 }],
    };
    expect(problems(twice)).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "error": "each metric is guarded once; 'failure_rate' repeats an earlier guardrail",
          },
          "input": "failure_rate",
          "loc": [
            "guardrails",
            1,
            "metric",
          ],
          "msg": "Value error, each metric is guarded once; 'failure_rate' repeats an earlier guardrail",
          "type": "value_error",
        },
      ]
    `);
  });

  it('refuses a policy without guardrails', () => {
    expect(problems({ ...policy, guardrails: [] })).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "actual_length": 0,
            "field_type": "List",
            "min_length": 1,
          },
          "input": [],
          "loc": [
            "guardrails",
          ],
          "msg": "List should have at least 1 item after validation, not 0",
          "type": "too_short",
        },
      ]
    `);
  });

  it('refuses a minimum of 0 tasks', () => {
    expect(problems({ ...policy, minimumTasks: 0 })).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "ge": 1,
          },
          "input": 0,
          "loc": [
            "minimumTasks",
          ],
          "msg": "Input should be greater than or equal to 1",
          "type": "greater_than_equal",
        },
      ]
    `);
  });

  it('refuses a minimum that is not a whole number of tasks', () => {
    expect(problems({ ...policy, minimumTasks: 2.5 })).toMatchInlineSnapshot(`
      [
        {
          "input": 2.5,
          "loc": [
            "minimumTasks",
          ],
          "msg": "Input should be a valid integer, got a number with a fractional part",
          "type": "int_from_float",
        },
      ]
    `);
  });

  it('refuses a maximum duration of 0', () => {
    expect(problems({ ...policy, maxDurationSeconds: 0 })).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "gt": 0,
          },
          "input": 0,
          "loc": [
            "maxDurationSeconds",
          ],
          "msg": "Input should be greater than 0",
          "type": "greater_than",
        },
      ]
    `);
  });

  it('refuses an unknown action', () => {
    expect(problems({ ...policy, action: 'ignore' })).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "expected": "'rollback_automatically', 'promote_automatically' or 'recommend_only'",
          },
          "input": "ignore",
          "loc": [
            "action",
          ],
          "msg": "Input should be 'rollback_automatically', 'promote_automatically' or 'recommend_only'",
          "type": "enum",
        },
      ]
    `);
  });

  it('names every missing field', () => {
    expect(problems({})).toMatchInlineSnapshot(`
      [
        {
          "input": {},
          "loc": [
            "guardrails",
          ],
          "msg": "Field required",
          "type": "missing",
        },
        {
          "input": {},
          "loc": [
            "minimumTasks",
          ],
          "msg": "Field required",
          "type": "missing",
        },
        {
          "input": {},
          "loc": [
            "maxDurationSeconds",
          ],
          "msg": "Field required",
          "type": "missing",
        },
        {
          "input": {},
          "loc": [
            "action",
          ],
          "msg": "Field required",
          "type": "missing",
        },
      ]
    `);
  });
});
