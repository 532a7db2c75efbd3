#!/usr/bin/env python3
"""Generates analysis/tests/reference.json: reference values for Agora's statistics, computed
with scipy and statsmodels. Each entry records the call that produced it.

    pip install scipy statsmodels numpy
    python3 scripts/stats_reference.py > analysis/tests/reference.json
"""
import json
import math
import sys
from itertools import combinations

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

rng = np.random.default_rng(20260815)
out = {"generator": "scripts/stats_reference.py", "scipy": scipy.__version__, "statsmodels": statsmodels.__version__}


def u_stat(x, y):
    return float(stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic").statistic)


def exact_perm(x, y):
    """Exact permutation distribution of U (ties as midranks), by scipy.stats.permutation_test."""
    def stat(a, b, axis):
        return np.apply_along_axis(lambda _: 0, axis, a) if False else _u_vec(a, b, axis)
    res = {}
    for alt in ("less", "greater", "two-sided"):
        r = stats.permutation_test((x, y), lambda a, b, axis: _u_vec(a, b, axis), permutation_type="independent",
                                   alternative=alt, n_resamples=np.inf, vectorized=True)
        res[alt] = float(r.pvalue)
    return res


def _u_vec(a, b, axis):
    a = np.moveaxis(np.asarray(a), axis, -1)
    b = np.moveaxis(np.asarray(b), axis, -1)
    gt = (a[..., :, None] > b[..., None, :]).sum(axis=(-1, -2))
    eq = (a[..., :, None] == b[..., None, :]).sum(axis=(-1, -2))
    return gt + 0.5 * eq


# Mann-Whitney: small samples with ties (exact permutation test), tie-free (mannwhitneyu exact),
# and complete separation of 30 vs 10 (the instrument's smallest attainable p).
mw = []
cases = [
    ([0.1, 0.2, 0.2, 0.5, 0.7, 0.7, 0.9], [0.2, 0.3, 0.4, 0.4, 0.6, 0.8]),
    ([1, 1, 1, 0, 0, 1, 1, 0], [0, 0, 0, 1, 0, 0, 0]),
    ([3, 5, 5, 5, 7, 9, 9, 10], [1, 2, 5, 5, 6, 9]),
    (list(np.round(rng.uniform(0, 1, 9), 1)), list(np.round(rng.uniform(0.2, 1.2, 8), 1))),
]
for x, y in cases:
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    p = exact_perm(np.array(x), np.array(y))
    # |U - n1 n2 / 2| convention: enumerate assignments exactly.
    pooled = np.array(x + y)
    n1 = len(x)
    ranks = stats.rankdata(pooled)
    u_obs = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    centre = n1 * len(y) / 2
    more = total = 0
    for idx in combinations(range(len(pooled)), n1):
        u = ranks[list(idx)].sum() - n1 * (n1 + 1) / 2
        total += 1
        if abs(u - centre) >= abs(u_obs - centre) - 1e-9:
            more += 1
    mw.append({"x": x, "y": y, "u": u_stat(x, y), "p_less": p["less"], "p_greater": p["greater"],
               "p_two_sided": p["two-sided"], "p_abs": more / total,
               "call": "scipy.stats.permutation_test((x, y), U, permutation_type='independent', n_resamples=inf); abs convention by exact enumeration"})
for x, y in [(list(rng.normal(0, 1, 12)), list(rng.normal(0.8, 1, 10)))]:
    x = [float(round(v, 6)) for v in x]
    y = [float(round(v, 6)) for v in y]
    r = stats.mannwhitneyu(x, y, alternative="two-sided", method="exact")
    rl = stats.mannwhitneyu(x, y, alternative="less", method="exact")
    mw.append({"x": x, "y": y, "u": float(r.statistic), "p_two_sided": float(r.pvalue), "p_less": float(rl.pvalue),
               "call": "scipy.stats.mannwhitneyu(x, y, method='exact') (no ties)"})
sep_x = [float(v) for v in np.linspace(0.5, 1.0, 30)]
sep_y = [float(v) for v in np.linspace(0.0, 0.4, 10)]
mw.append({"x": sep_x, "y": sep_y, "u": 300.0, "p_two_sided": 2 / math.comb(40, 10),
           "call": "complete separation, 30 vs 10: 2 / math.comb(40, 10)"})
out["mann_whitney"] = mw

# Cliff's delta from U.
out["cliffs_delta"] = [{"x": c["x"], "y": c["y"], "delta": 2 * c["u"] / (len(c["x"]) * len(c["y"])) - 1,
                        "call": "2 * scipy.stats.mannwhitneyu(x, y).statistic / (n1 * n2) - 1"} for c in mw]

# Holm.
holm = []
for p in ([0.01, 0.04, 0.03, 0.005, 0.2], [0.5, 0.5, 0.001], [0.02, 0.02, 0.02, 0.02], list(rng.uniform(0, 0.2, 8))):
    p = [float(v) for v in p]
    holm.append({"p": p, "adjusted": [float(v) for v in multipletests(p, method="holm")[1]],
                 "call": "statsmodels.stats.multitest.multipletests(p, method='holm')[1]"})
out["holm"] = holm

# TOST against an anchor: 90 % t-interval and one-sided p-values.
tost = []
for vals, theta, eps in (
    (list(rng.normal(0.46, 0.08, 30)), 0.5, 0.10),
    (list(rng.normal(0.30, 0.02, 6)), 0.40, 0.05),
    (list(rng.normal(0.41, 0.03, 12)), 0.40, 0.05),
    ([0.52, 0.47, 0.55], 0.5, 0.10),
):
    vals = [float(round(v, 6)) for v in vals]
    a = np.array(vals)
    n = len(a)
    lo, hi = stats.t.interval(0.90, n - 1, loc=a.mean() - theta, scale=stats.sem(a))
    p_lower = stats.ttest_1samp(a, theta - eps, alternative="greater").pvalue
    p_upper = stats.ttest_1samp(a, theta + eps, alternative="less").pvalue
    tost.append({"values": vals, "theta": theta, "margin": eps, "ci_low": float(lo), "ci_high": float(hi),
                 "p_lower": float(p_lower), "p_upper": float(p_upper),
                 "call": "scipy.stats.t.interval(0.90, n-1, loc=mean-theta, scale=sem); ttest_1samp(values, theta -/+ margin, alternative='greater'/'less')"})
out["tost"] = tost

# Wasserstein on the 11-20 support, normalised by the width (9).
human = [0.04, 0.00, 0.03, 0.06, 0.01, 0.06, 0.32, 0.30, 0.12, 0.06]
support = list(range(11, 21))
wass = []
for q in ([0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0.1] * 10, human, list(rng.dirichlet(np.ones(10)))):
    q = [float(v) for v in q]
    d = stats.wasserstein_distance(support, support, u_weights=q, v_weights=human) / 9
    wass.append({"p": q, "q": human, "distance": float(d),
                 "call": "scipy.stats.wasserstein_distance(support, support, p, q) / (20 - 11)"})
out["wasserstein"] = wass
v = [float(x) for x in rng.normal(0, 1, 37)]
out["percentile_type7"] = [{"values": v, "q": q, "value": float(np.percentile(v, q, method="linear")),
                            "call": "numpy.percentile(values, q, method='linear')"} for q in (2.5, 50, 97.5, 0, 100)]

# Heterogeneity.
het = []
for means, variances in (([0.1, 0.3, 0.5], [0.01, 0.02, 0.01]), ([0.42, 0.45, 0.40, 0.47], [0.001, 0.002, 0.0015, 0.001]),
                         ([0.0, 1.0, 0.5, 0.07, 0.95], [1e-4, 2e-4, 5e-4, 1e-4, 3e-4])):
    r = combine_effects(np.array(means), np.array(variances), method_re="dl")
    # I² truncated at zero, as Higgins & Thompson define it (statsmodels reports (Q - df)/Q raw).
    het.append({"means": means, "variances": variances, "i2": max(0.0, float(r.i2)), "q": float(r.q), "tau2": max(0.0, float(r.tau2)),
                "sd_between": float(np.std(means, ddof=1)),
                "call": "statsmodels.stats.meta_analysis.combine_effects(means, variances, method_re='dl'); i2 and tau2 truncated at 0"})
out["heterogeneity"] = het

# Spearman.
sp = []
for x, y in (([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [2.1, 1.9, 3.5, 3.0, 4.8, 6.1, 5.5, 8.0, 7.2, 9.9, 9.1]),
             ([2.5, 0.1, 1.0, 3.3, 0.0, 2.5, 4.0, 1.2], [-0.1, 0.4, 0.3, -0.5, 0.6, -0.2, -0.6, 0.1]),
             (list(rng.normal(0, 1, 20)), list(rng.normal(0, 1, 20)))):
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    r = stats.spearmanr(x, y)
    sp.append({"x": x, "y": y, "rho": float(r.statistic), "p": float(r.pvalue), "call": "scipy.stats.spearmanr(x, y)"})
out["spearman"] = sp

# Proportions.
out["wilson"] = [{"k": k, "n": n, "alpha": a, "low": float(lo), "high": float(hi),
                  "call": "statsmodels.stats.proportion.proportion_confint(k, n, alpha, method='wilson')"}
                 for k, n, a in ((7, 30, 0.05), (0, 12, 0.05), (30, 30, 0.05), (16, 100, 0.10))
                 for lo, hi in [proportion_confint(k, n, alpha=a, method="wilson")]]
newc = []
for k1, n1, k2, n2 in ((27, 30, 9, 30), (0, 10, 3, 10), (56, 111, 8, 71), (5, 5, 5, 5)):
    lo, hi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=0.05)
    newc.append({"k1": k1, "n1": n1, "k2": k2, "n2": n2, "low": float(lo), "high": float(hi),
                 "call": "statsmodels.stats.proportion.confint_proportions_2indep(k1, n1, k2, n2, method='newcomb', compare='diff')"})
out["newcombe"] = newc

# Power (normal approximation), decision-level effect sizes, one decision per run.
out["power"] = [{"effect_size": d, "alpha": 0.05, "power": pw,
                 "n": float(NormalIndPower().solve_power(effect_size=d, alpha=0.05, power=pw, ratio=1)),
                 "call": "statsmodels.stats.power.NormalIndPower().solve_power(effect_size, alpha=0.05, power, ratio=1)"}
                for d, pw in ((0.5, 0.8), (1.0, 0.9), (0.2, 0.8))]

# Distributions.
out["t_ppf"] = [{"p": p, "df": df, "value": float(stats.t.ppf(p, df)), "call": "scipy.stats.t.ppf(p, df)"}
                for p, df in ((0.95, 29), (0.95, 2), (0.975, 5), (0.05, 11), (0.999, 100))]
out["t_cdf"] = [{"t": t, "df": df, "value": float(stats.t.cdf(t, df)), "call": "scipy.stats.t.cdf(t, df)"}
                for t, df in ((1.7, 29), (-2.5, 5), (0.3, 2), (-8.0, 30), (12.0, 9))]
out["norm_ppf"] = [{"p": p, "value": float(stats.norm.ppf(p)), "call": "scipy.stats.norm.ppf(p)"}
                   for p in (0.975, 0.8, 0.5, 1e-6, 0.95)]
out["norm_cdf"] = [{"x": x, "value": float(stats.norm.cdf(x)), "call": "scipy.stats.norm.cdf(x)"}
                   for x in (-3.0, -0.5, 0.0, 1.96, 6.0)]

# Mean with a two-sided 95 % Student-t interval (the punishment-effect table and figure).
mi = []
for xs in ([0.9, 0.8, 1.0, 0.7, 0.95], [0.1, 0.0, 0.35, 0.2], [0.5, 0.5, 0.5, 0.55, 0.45, 0.6, 0.4, 0.5, 0.52, 0.48],
           [0.0, 1.0]):
    a = np.asarray(xs)
    lo, hi = stats.t.interval(0.95, len(a) - 1, loc=a.mean(), scale=stats.sem(a))
    mi.append({"x": xs, "mean": float(a.mean()), "low": float(lo), "high": float(hi),
               "call": "scipy.stats.t.interval(0.95, n - 1, loc=mean, scale=scipy.stats.sem(x))"})
out["mean_interval"] = mi

json.dump(out, sys.stdout, indent=1)
sys.stdout.write("\n")
