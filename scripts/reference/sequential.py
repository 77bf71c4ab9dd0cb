#!/usr/bin/python3
"""Reference values for the sequential (always-valid) A/B statistics and the canary guardrails in
src/domain/experiments (confidence-sequence.ts, restricted-rates.ts, sequential.ts, canary.ts).

Run with the system interpreter that has SciPy (Debian: apt-get install python3-scipy):

    /usr/bin/python3 scripts/reference/sequential.py

Writes test/fixtures/experiments/sequential.json. Not a runtime dependency.

Independent of the TypeScript's closed forms: the restricted rates solve the likelihood equation numerically
(brentq) instead of the Farrington-Manning cubic; the mixture likelihood ratio is the normal mixture
integrated numerically (quad) instead of its closed form; the interval's ends are roots of that integral
(brentq) instead of the TypeScript's |z| < c search. The closed forms of the papers are checked against
the numerical values here before anything is written.
"""

import json
import math
import warnings
from pathlib import Path

import numpy as np
import scipy
from scipy import integrate, optimize, stats

OUTPUT = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "experiments" / "sequential.json"
DEFAULT_EXPECTED_OBSERVATIONS = 5000


def rho_squared(alpha, expected):
    """Howard, Ramdas, McAuliffe and Sekhon (2021): the rho^2 tuned to be tightest at n* observations."""
    l = -2 * math.log(alpha)
    return (l + math.log(l + 1)) / expected


def restricted_rates(control, treatment, delta):
    """Maximum-likelihood rates (p_c, p_t) subject to p_t - p_c = delta, by solving the score equation."""
    (nc, sc), (nt, st) = control, treatment

    def per(count, rate):
        return 0.0 if count == 0 else (math.inf if rate <= 0 else count / rate)

    def score(pc):
        pt = pc + delta
        # d/dp_c of sc log p_c + (nc - sc) log(1 - p_c) + st log p_t + (nt - st) log(1 - p_t)
        return per(sc, pc) - per(nc - sc, 1 - pc) + per(st, pt) - per(nt - st, 1 - pt)

    lo, hi = max(0.0, -delta), min(1.0, 1.0 - delta)
    if hi <= lo:  # a difference of -1 or 1 leaves one pair of rates
        return lo, min(1.0, max(0.0, lo + delta))
    eps = 1e-300
    a, b = lo + max(eps, 1e-15 * (hi - lo)), hi - max(eps, 1e-15 * (hi - lo))
    fa, fb = score(a), score(b)
    # The log-likelihood is concave: a score of one sign all along puts the maximum at an end.
    if fa <= 0:
        pc = lo
    elif fb >= 0:
        pc = hi
    else:
        pc = optimize.brentq(score, a, b, xtol=1e-16, rtol=4 * np.finfo(float).eps, maxiter=500)
    return pc, min(1.0, max(0.0, pc + delta))


def z_score(control, treatment, delta):
    (nc, sc), (nt, st) = control, treatment
    d = st / nt - sc / nc
    if d == delta:
        return 0.0
    pc, pt = restricted_rates(control, treatment, delta)
    variance = pt * (1 - pt) / nt + pc * (1 - pc) / nc
    return math.inf if variance == 0 else (d - delta) / math.sqrt(variance)


def log_mixture_ratio(z, n, rho2):
    """log of the integral over lambda ~ N(0, rho^2) of exp(lambda S - lambda^2 n / 2), S = z sqrt(n):
    the normal-mixture martingale of Robbins (1970) as in Waudby-Smith et al. (2024), numerically. The
    integrand's exponent is a quadratic in lambda; it is centred on its maximum, so that the integrand
    neither overflows nor vanishes for large z."""
    if math.isinf(z):
        return math.inf
    s = z * math.sqrt(n)
    precision = n + 1 / rho2

    def log_integrand(lam):
        return lam * s - lam * lam * n / 2 - lam * lam / (2 * rho2) - 0.5 * math.log(2 * math.pi * rho2)

    centre = s / precision
    peak = log_integrand(centre)
    half_width = 40 / math.sqrt(precision)
    with warnings.catch_warnings():
        # Far from the interval (|z| in the thousands, probed on the way to its ends) the exponent's rounding
        # stops quad short of 1e-12; there only the sign of log L - log(1/alpha) matters. Elsewhere: fail.
        warnings.simplefilter("ignore" if abs(z) > 100 else "error", integrate.IntegrationWarning)
        value, _ = integrate.quad(
            lambda lam: math.exp(log_integrand(lam) - peak),
            centre - half_width,
            centre + half_width,
            points=[centre],
            epsabs=0,
            epsrel=1e-12,
            limit=500,
        )
    return peak + math.log(value)


def closed_form_log_ratio(z, n, rho2):
    r = n * rho2
    return r / (1 + r) * z * z / 2 - math.log1p(r) / 2


def sequential_figures(control, treatment, alpha, expected):
    (nc, sc), (nt, st) = control, treatment
    n = nc + nt
    rho2 = rho_squared(alpha, expected)
    d = st / nt - sc / nc
    threshold = -math.log(alpha)

    def excess(delta):
        return log_mixture_ratio(z_score(control, treatment, delta), n, rho2) - threshold

    z0 = z_score(control, treatment, 0.0)
    log_ratio = log_mixture_ratio(z0, n, rho2)
    assert math.isclose(log_ratio, closed_form_log_ratio(z0, n, rho2), rel_tol=1e-10, abs_tol=1e-10)
    p_value = min(1.0, math.exp(-log_ratio))

    def bound(end):
        if excess(end) < 0:
            return end
        outside = end
        # At -1 or 1 the variance can vanish (an infinite z); the root lies well inside.
        if math.isinf(excess(end)):
            outside = end - math.copysign(1e-9, end)
        return optimize.brentq(excess, d, outside, xtol=1e-16, rtol=4 * np.finfo(float).eps, maxiter=500)

    lower, upper = bound(-1.0), bound(1.0)
    # Waudby-Smith et al.'s interval with the restricted variance: |z| < c at both ends.
    r = n * rho2
    critical = math.sqrt((1 + r) / r * (math.log1p(r) - 2 * math.log(alpha)))
    for end in (lower, upper):
        if abs(end) < 1:
            assert math.isclose(abs(z_score(control, treatment, end)), critical, rel_tol=1e-9), (end, critical)
    return {"difference": d, "alwaysValidPValue": p_value, "lower": lower, "upper": upper, "criticalZ": critical}


def counts(c):
    return {"observations": c[0], "successes": c[1]}


SEQUENTIAL = [
    ("equal rates", (1000, 100), (1000, 100), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("modest difference", (1000, 100), (1000, 120), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("clear difference", (5000, 500), (5000, 650), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("treatment worse", (3000, 150), (700, 20), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("few subjects", (12, 3), (10, 7), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("one subject each", (1, 0), (1, 1), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("nobody converted", (50, 0), (60, 0), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("everybody converted", (40, 40), (30, 30), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("none against all", (20, 0), (20, 20), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("control converts nobody", (200, 0), (200, 9), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("unequal split", (800, 80), (3200, 384), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("a million subjects each", (1000000, 50000), (1000000, 50800), 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("alpha 0.01", (2000, 200), (2000, 260), 0.01, DEFAULT_EXPECTED_OBSERVATIONS),
    ("alpha 0.2", (2000, 200), (2000, 230), 0.2, DEFAULT_EXPECTED_OBSERVATIONS),
    ("tuned to 500", (2000, 200), (2000, 250), 0.05, 500),
    ("tuned to 100,000", (2000, 200), (2000, 250), 0.05, 100000),
    ("half of three comparisons' alpha", (1500, 300), (1500, 360), 0.05 / 3, DEFAULT_EXPECTED_OBSERVATIONS),
]

FAMILIES = [
    ("three variants", [(1000, 100), (1000, 115), (1000, 160)], 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("four variants, no difference", [(800, 80), (820, 82), (790, 79), (805, 80)], 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("three variants, one without observations", [(500, 50), (0, 0), (500, 90)], 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
]

RESTRICTED = [
    ((1800, 90), (200, 14), 0.02),
    ((1000, 50), (100, 3), 0.1),
    ((10, 0), (10, 0), -0.3),
    ((10, 5), (10, 10), -0.2),
    ((50, 5), (50, 5), 0.0),
    ((50, 0), (50, 0), 0.0),
    ((3000, 150), (700, 20), -0.05),
    ((1000000, 50000), (1000000, 50800), 0.001),
    ((7, 2), (9, 8), 0.9),
]

# (name, production, canary, direction, tolerance, minimum tasks, alpha, expected observations)
GUARDRAILS = [
    ("no outcomes yet", (500, 25), (0, 0), "lower_is_better", 0.02, 100, 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("failures far above production, before the minimum", (900, 45), (60, 30), "lower_is_better", 0.02, 200, 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("failures equal, before the minimum", (900, 45), (100, 5), "lower_is_better", 0.02, 200, 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("failures equal, after the minimum", (18000, 900), (2000, 100), "lower_is_better", 0.02, 200, 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("failures slightly above, after the minimum", (1800, 90), (200, 14), "lower_is_better", 0.02, 200, 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("acceptance well below production", (1500, 900), (500, 200), "higher_is_better", 0.05, 100, 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("acceptance equal, tolerance 0", (9000, 5400), (1000, 600), "higher_is_better", 0.0, 100, 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("accuracy clearly better, tolerance 0", (9000, 5400), (1000, 700), "higher_is_better", 0.0, 100, 0.05, DEFAULT_EXPECTED_OBSERVATIONS),
    ("accuracy equal, alpha for three guardrails", (9000, 7200), (3000, 2400), "higher_is_better", 0.03, 100, 0.05 / 3, 20000),
]


def guardrail_case(name, production, canary, direction, tolerance, minimum, alpha, expected):
    case = {
        "name": name,
        "production": counts(production),
        "canary": counts(canary),
        "direction": direction,
        "tolerance": tolerance,
        "minimumTasks": minimum,
        "alpha": alpha,
        "expectedObservations": expected,
        "difference": None,
        "lower": None,
        "upper": None,
        "verdict": "collecting",
    }
    if production[0] == 0 or canary[0] == 0:
        return case
    figures = sequential_figures(production, canary, alpha, expected)
    lower, upper = figures["lower"], figures["upper"]
    harm_lower, harm_upper = (lower, upper) if direction == "lower_is_better" else (-upper, -lower)
    if harm_lower > tolerance:
        verdict = "worse"
    elif canary[0] < minimum:
        verdict = "collecting"
    elif harm_upper < tolerance:
        verdict = "not_worse"
    else:
        verdict = "inconclusive"
    case.update(difference=figures["difference"], lower=lower, upper=upper, verdict=verdict)
    return case


def sequential_case(name, control, treatment, alpha, expected):
    figures = sequential_figures(control, treatment, alpha, expected)
    return {
        "name": name,
        "control": counts(control),
        "treatment": counts(treatment),
        "alpha": alpha,
        "expectedObservations": expected,
        "rhoSquared": rho_squared(alpha, expected),
        **figures,
        "significant": figures["alwaysValidPValue"] <= alpha,
    }


def family_case(name, variants, alpha, expected):
    control, treatments = variants[0], variants[1:]
    m = len(treatments)
    comparisons = []
    for treatment in treatments:
        if control[0] == 0 or treatment[0] == 0:
            comparisons.append({"alwaysValidPValue": None, "adjustedPValue": None, "lower": None, "upper": None, "significant": False})
            continue
        figures = sequential_figures(control, treatment, alpha / m, expected)
        p = figures["alwaysValidPValue"]
        comparisons.append(
            {
                "alwaysValidPValue": p,
                "adjustedPValue": min(1.0, m * p),
                "lower": figures["lower"],
                "upper": figures["upper"],
                "significant": p <= alpha / m,
            }
        )
    return {"name": name, "variants": [counts(v) for v in variants], "alpha": alpha, "expectedObservations": expected, "comparisons": comparisons}


def restricted_case(control, treatment, delta):
    pc, pt = restricted_rates(control, treatment, delta)
    return {"control": counts(control), "treatment": counts(treatment), "difference": delta, "controlRate": pc, "treatmentRate": pt}


def main():
    reference = {
        "source": "scripts/reference/sequential.py",
        "scipy": scipy.__version__,
        "tolerance": {"relative": 1e-9, "absolute": 1e-12},
        "restrictedRates": [restricted_case(*c) for c in RESTRICTED],
        "sequential": [sequential_case(*c) for c in SEQUENTIAL],
        "families": [family_case(*c) for c in FAMILIES],
        "guardrails": [guardrail_case(*c) for c in GUARDRAILS],
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(reference, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
