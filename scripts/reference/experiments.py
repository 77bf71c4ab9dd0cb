#!/usr/bin/python3
"""Reference values for the A/B test statistics in src/domain/experiments.

Run with the system interpreter that has SciPy (Debian: apt-get install python3-scipy):

    /usr/bin/python3 scripts/reference/experiments.py

Writes test/fixtures/experiments/reference.json. Not a runtime dependency.
"""

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

ALPHA = 0.05
MIN_EXPECTED = 5
SRM_ALPHA = 0.001
OUTPUT = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "experiments" / "reference.json"


def table(variants):
    successes = [s for _, s in variants]
    failures = [n - s for n, s in variants]
    return np.array([successes, failures], dtype=float)


def contingency(variants):
    """chi2_contingency without Yates' correction; None when a margin is zero (test undefined)."""
    t = table(variants)
    if (t.sum(axis=0) == 0).any() or (t.sum(axis=1) == 0).any():
        return None
    res = stats.chi2_contingency(t, correction=False)
    return {
        "chiSquared": float(res[0]),
        "pValue": float(res[1]),
        "degreesOfFreedom": int(res[2]),
        "minExpectedCount": float(res[3].min()),
    }


def z_test(control, treatment):
    (nc, sc), (nt, st) = control, treatment
    pooled = (sc + st) / (nc + nt)
    se = math.sqrt(pooled * (1 - pooled) * (1 / nc + 1 / nt))
    z = (st / nt - sc / nc) / se
    return z, float(2 * stats.norm.sf(abs(z)))


def fisher(control, treatment):
    """Two-sided Fisher's exact test on the 2x2 table of two variants."""
    (nc, sc), (nt, st) = control, treatment
    return float(stats.fisher_exact([[sc, nc - sc], [st, nt - st]], alternative="two-sided")[1])


def close(a, b):
    return abs(a - b) <= max(1e-12, 1e-9 * abs(b))


def holm(p_values):
    defined = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(defined):
        running = max(running, min(1.0, (len(defined) - rank) * p))
        adjusted[i] = running
    return adjusted


def significance_case(name, variants):
    c = contingency(variants)
    case = {
        "name": name,
        "variants": [{"observations": n, "successes": s} for n, s in variants],
        "method": "two_proportion_z" if len(variants) == 2 else "chi_squared_homogeneity",
        "degreesOfFreedom": len(variants) - 1,
        "statistic": None,
        "chiSquared": None,
        "pValue": None,
        "minExpectedCount": None,
        "significant": False,
        "smallSample": False,
        "exactPValue": None,
    }
    if c is not None:
        case.update(c)
        case["statistic"] = c["chiSquared"]
        # The decision is the test's alone; a small sample is a warning beside it.
        case["significant"] = c["pValue"] < ALPHA
        case["smallSample"] = c["minExpectedCount"] < MIN_EXPECTED
        if len(variants) == 2 and case["smallSample"]:
            case["exactPValue"] = fisher(*variants)
        if len(variants) == 2:
            z, p_z = z_test(*variants)
            assert close(p_z, c["pValue"]), (name, p_z, c["pValue"])
            assert close(z * z, c["chiSquared"]), (name, z, c["chiSquared"])
            case["statistic"] = z
    pairs = [contingency([variants[0], v]) for v in variants[1:]]
    p_values = [None if p is None else p["pValue"] for p in pairs]
    adjusted = holm(p_values)
    small = [pair is not None and pair["minExpectedCount"] < MIN_EXPECTED for pair in pairs]
    case["pairwise"] = [
        {
            "pValue": p,
            "adjustedPValue": a,
            "significant": pair is not None and a < ALPHA,
            "smallSample": is_small,
            "exactPValue": fisher(variants[0], v) if is_small else None,
        }
        for p, a, pair, is_small, v in zip(p_values, adjusted, pairs, small, variants[1:])
    ]
    return case


SIGNIFICANCE = [
    ("two variants, modest difference", [(1000, 100), (1000, 120)]),
    ("two variants, equal rates", [(500, 50), (500, 50)]),
    ("two variants, p below 1e-20", [(20000, 2000), (20000, 2700)]),
    ("two variants, treatment worse", [(3000, 150), (700, 20)]),
    ("two variants, small p but expected counts below 5", [(20, 0), (20, 9)]),
    ("two variants, 0/20 against 5/20: p below alpha, expected counts below 5", [(20, 0), (20, 5)]),
    ("two variants, small sample, exact test not significant", [(12, 1), (9, 4)]),
    ("two variants, one success in a million against a few", [(1000000, 1), (40, 2)]),
    ("two variants, smallest expected count exactly 5", [(20, 10), (20, 0)]),
    ("two variants, a million subjects each", [(1000000, 50000), (1000000, 50800)]),
    ("two variants, a million subjects, far tail", [(1000000, 100000), (1000000, 110000)]),
    ("three variants", [(1000, 100), (1000, 115), (1000, 130)]),
    ("three variants, no difference", [(800, 80), (820, 82), (790, 79)]),
    ("three variants, small p but expected counts below 5", [(10, 0), (10, 0), (10, 8)]),
    ("four variants", [(2500, 250), (2400, 260), (2600, 300), (2500, 240)]),
    ("four variants, p below 1e-20", [(5000, 500), (5000, 520), (5000, 800), (5000, 480)]),
    ("four variants, a million subjects each", [(1000000, 30000), (1000000, 30500), (1000000, 29800), (1000000, 31200)]),
    ("undefined: a variant without observations", [(100, 10), (0, 0)]),
    ("undefined: a third variant without observations", [(100, 10), (100, 25), (0, 0)]),
    ("undefined: every subject converted", [(50, 50), (60, 60)]),
    ("undefined: no subject converted", [(50, 0), (60, 0), (70, 0)]),
]

SRM = [
    ("balanced split", [5000, 5050], [1, 1]),
    ("balanced weights, skewed counts", [5000, 5400], [1, 1]),
    ("weights 1:3", [2480, 7520], [1, 3]),
    ("weights 1:3 given as fractions", [2480, 7520], [0.25, 0.75]),
    ("weights 1:3, counts 1:2", [3333, 6667], [1, 3]),
    ("three equal variants", [3300, 3350, 3350], [1, 1, 1]),
    ("weights 1:1:2, mismatch", [1000, 1000, 2300], [1, 1, 2]),
    ("a million subjects, within noise", [500000, 502500], [1, 1]),
    ("a million subjects, p below 1e-20", [1000000, 985000], [1, 1]),
    ("a million subjects, p underflows to zero", [1000000, 900000], [1, 1]),
    ("no observations", [0, 0], [1, 1]),
]

# Tables for Fisher's exact test beyond the significance cases: small, symmetric (ties), lopsided, and with
# a large control beside a small treatment. (observations, successes) of control and treatment.
FISHER = [
    ((nc, sc), (nt, st))
    for nc in (3, 7, 20, 50)
    for nt in (3, 8, 20)
    for sc in sorted({0, 1, nc // 2, nc})
    for st in sorted({0, 2, nt - 1})
    if 0 < sc + st < nc + nt
] + [((20, 10), (20, 10)), ((10, 5), (10, 4)), ((100000, 3), (25, 1)), ((5000, 2500), (5000, 2400))]

WILSON = [(0, 10), (10, 10), (5, 10), (1, 3), (120, 1000), (50000, 1000000), (1, 1)]

LIFT = [
    ((1000, 100), (1000, 120)),
    ((1000, 100), (1000, 80)),
    ((3000, 150), (700, 50)),
    ((1000000, 50000), (1000000, 50800)),
    ((10, 10), (10, 9)),
    ((1000, 100), (1000, 0)),
    ((1000, 0), (1000, 10)),
]

HOLM = [
    [0.01, 0.04, 0.03],
    [0.5, 0.2, 0.9, 0.001],
    [0.02, None, 0.02, 0.3],
    [None, None],
    [0.4, 0.6, 0.7],
    [1e-30, 1e-25, 0.049],
]

ASSIGNMENT_SUBJECTS = ["user-1", "user-2", "user-3", "user-42", "ünïcødé", "", "a:b"]
ASSIGNMENT_TESTS = ["checkout-button", "pricing-page"]
ASSIGNMENT_VARIANTS = [
    [{"id": "control", "weight": 1}, {"id": "treatment", "weight": 3}],
    [{"id": "a", "weight": 1}, {"id": "b", "weight": 1}, {"id": "c", "weight": 1}],
]


def srm_case(name, observations, weights):
    total = sum(observations)
    statistic = p = None
    if total > 0:
        expected = [total * w / sum(weights) for w in weights]
        res = stats.chisquare(observations, expected)
        statistic, p = float(res[0]), float(res[1])
    return {
        "name": name,
        "observations": observations,
        "weights": weights,
        "statistic": statistic,
        "pValue": p,
        "mismatch": p is not None and p < SRM_ALPHA,
    }


def wilson_case(successes, observations, confidence=0.95):
    z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    p = successes / observations
    denominator = 1 + z * z / observations
    centre = (p + z * z / (2 * observations)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / observations + z * z / (4 * observations**2))
    return {
        "successes": successes,
        "observations": observations,
        "confidence": confidence,
        "lower": max(0.0, centre - half),
        "upper": min(1.0, centre + half),
    }


def lift_case(control, treatment, confidence=0.95):
    (nc, sc), (nt, st) = control, treatment
    case = {
        "control": {"observations": nc, "successes": sc},
        "treatment": {"observations": nt, "successes": st},
        "confidence": confidence,
        "result": None,
    }
    if sc == 0:
        return case
    lift = (st / nt - sc / nc) / (sc / nc)
    lower = upper = None
    if st > 0:
        z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
        log_rr = math.log((st / nt) / (sc / nc))
        se = math.sqrt(1 / st - 1 / nt + 1 / sc - 1 / nc)
        lower, upper = math.expm1(log_rr - z * se), math.expm1(log_rr + z * se)
    case["result"] = {"lift": lift, "lower": lower, "upper": upper}
    return case


def assignment_point(test_id, subject_id):
    digest = hashlib.sha256(f"{test_id}:{subject_id}".encode("utf-8")).hexdigest()
    return int(digest[:13], 16) / 2**52


def assign(point, variants):
    total = sum(v["weight"] for v in variants)
    cumulative = 0.0
    for v in variants:
        cumulative += v["weight"] / total
        if point < cumulative:
            return v["id"]
    return variants[-1]["id"]


def main():
    reference = {
        "source": "scripts/reference/experiments.py",
        "scipy": scipy.__version__,
        "tolerance": {"relative": 1e-9, "absolute": 1e-12},
        "significance": [significance_case(name, v) for name, v in SIGNIFICANCE],
        "sampleRatioMismatch": [srm_case(*c) for c in SRM],
        "wilson": [wilson_case(*c) for c in WILSON],
        "relativeLift": [lift_case(*c) for c in LIFT],
        "holm": [{"pValues": c, "adjusted": holm(c)} for c in HOLM],
        "fisherExact": [
            {
                "control": {"observations": c[0], "successes": c[1]},
                "treatment": {"observations": t[0], "successes": t[1]},
                "pValue": fisher(c, t),
            }
            for c, t in FISHER
        ],
        "assignment": [
            {
                "testId": test_id,
                "subjectId": subject_id,
                "point": assignment_point(test_id, subject_id),
                "variants": variants,
                "variantId": assign(assignment_point(test_id, subject_id), variants),
            }
            for test_id in ASSIGNMENT_TESTS
            for subject_id in ASSIGNMENT_SUBJECTS
            for variants in ASSIGNMENT_VARIANTS
        ],
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(reference, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
