#!/usr/bin/env python3
"""Generates stats/tests/reference.json: reference values for Agora's statistics, computed
with scipy, statsmodels and scikit-learn. Each entry records the call that produced it, and the
file records the versions used. On a clean machine:

    python3 -m venv /tmp/statsref
    /tmp/statsref/bin/pip install scipy==1.17.1 statsmodels==0.15.0 scikit-learn==1.9.1 numpy==2.4.6
    /tmp/statsref/bin/python scripts/stats_reference.py > stats/tests/reference.json

Every input is fixed or drawn from a seeded generator, so the output is byte-for-byte the same
with the same versions.
"""
import json
import math
import sys
from itertools import combinations

import numpy as np
import scipy
import sklearn
import statsmodels
import statsmodels.api as sm
from scipy import stats
from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_score, recall_score
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.meta_analysis import combine_effects
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

rng = np.random.default_rng(20260815)
out = {"generator": "scripts/stats_reference.py", "scipy": scipy.__version__, "statsmodels": statsmodels.__version__,
       "scikit-learn": sklearn.__version__, "numpy": np.__version__}


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

# ---------------------------------------------------------------------------------------------
# The transcript audit (the SUVA audit paper, §240.4–240.7 and §240.12): Cohen's κ with per-code recall and
# the confusion matrix, OLS with CR1 cluster-robust errors, fixed effects by within-group
# demeaning, a logit with average marginal effects, and occurrence shares. Its own generator,
# so the values above do not move when cases are added here.
arng = np.random.default_rng(20260903)
# Draws per cluster or group follow first appearance (dict.fromkeys), never a set's hash order,
# which changes between processes for strings.


def finite_or_none(v):
    v = float(v)
    return v if math.isfinite(v) else None


# Cohen's κ: rows of the confusion matrix are y1 (the reference), columns y2.
CODES = ["altruism", "competition", "fairness", "self_interest", "social_welfare", "understanding"]
kappa_cases = []
# The SUVA audit paper §240.14 fixture (κ = 0.6098).
kappa_cases.append(([0, 0, 1, 1, 2, 2, 0, 1], [0, 1, 1, 1, 2, 0, 0, 1], None))
# Human gold against a lexicon-like coder: competition is never recognised (zero recall),
# altruism partly falls to understanding, a self-interested sentence with "fair" goes to
# fairness, social_welfare is used only by the coder (recall undefined) and the codebook's
# ingroup code is used by neither.
gold = list(arng.choice(["altruism", "competition", "fairness", "self_interest", "understanding"], size=57,
                        p=[0.18, 0.07, 0.15, 0.2, 0.4]))
coder = []
for g in gold:
    u = arng.uniform()
    if g == "competition":
        coder.append("understanding")
    elif g == "altruism" and u < 0.35:
        coder.append("understanding")
    elif g == "self_interest" and u < 0.2:
        coder.append("fairness")
    elif g == "understanding" and u < 0.06:
        coder.append("social_welfare")
    else:
        coder.append(str(g))
gold = [str(g) for g in gold]
kappa_cases.append((gold, coder, CODES + ["ingroup"]))
# Tied marginals: four codes, each used exactly five times by both raters.
t1 = ["a"] * 5 + ["b"] * 5 + ["c"] * 5 + ["d"] * 5
t2 = ["a", "a", "a", "b", "c", "b", "b", "b", "a", "d", "c", "c", "c", "d", "b", "d", "d", "d", "a", "c"]
kappa_cases.append((t1, t2, None))
# Worse than chance (κ < 0).
kappa_cases.append((["x", "x", "y", "y", "x", "y", "x", "y", "x"], ["y", "y", "x", "x", "x", "x", "y", "y", "y"], None))
# Larger: 150 labels on five integer codes, about 80 % agreement.
k1 = arng.integers(0, 5, 150)
k2 = np.where(arng.uniform(size=150) < 0.8, k1, arng.integers(0, 5, 150))
kappa_cases.append(([int(v) for v in k1], [int(v) for v in k2], None))
kap = []
for y1, y2, labels in kappa_cases:
    labs = labels if labels is not None else sorted(set(y1) | set(y2))
    cm = confusion_matrix(y1, y2, labels=labs)
    r = cohens_kappa(cm)
    n = cm.sum()
    p_o = np.trace(cm) / n
    p_e = float((cm.sum(1) / n) @ (cm.sum(0) / n))
    kap.append({"y1": y1, "y2": y2, "labels": labels, "all_labels": labs,
                "kappa": float(cohen_kappa_score(y1, y2, labels=labs)),
                "p_o": float(p_o), "p_e": p_e,
                "confusion": [[int(v) for v in row] for row in cm],
                "recall": [finite_or_none(v) for v in recall_score(y1, y2, labels=labs, average=None, zero_division=np.nan)],
                "precision": [finite_or_none(v) for v in precision_score(y1, y2, labels=labs, average=None, zero_division=np.nan)],
                "se": float(r["std_kappa"]), "ci_low": float(r["kappa_low"]), "ci_high": float(r["kappa_upp"]),
                "se0": float(r["std_kappa0"]), "z": float(r["z_value"]), "p": float(r["pvalue_two_sided"]),
                "call": "sklearn.metrics.cohen_kappa_score(y1, y2, labels); confusion_matrix, recall_score, precision_score"
                        "(y1, y2, labels, average=None, zero_division=nan); statsmodels.stats.inter_rater.cohens_kappa"
                        "(confusion): std_kappa, kappa_low/upp (95 %), std_kappa0, z_value, pvalue_two_sided"})
out["kappa"] = kap


def codes_of(labels):
    """Cluster labels as integer codes in order of first appearance (statsmodels wants integers)."""
    index = {}
    return np.array([index.setdefault(v, len(index)) for v in labels])


def cluster_fit(X, y, clusters):
    return sm.OLS(np.asarray(y, float), np.asarray(X, float)).fit(
        cov_type="cluster", cov_kwds={"groups": codes_of(clusters)}, use_t=True)


def fit_entry(res, k, alpha=0.05):
    ci = res.conf_int(alpha=alpha)
    return {"coef": [float(v) for v in res.params[:k]], "se": [float(v) for v in res.bse[:k]],
            "t": [float(v) for v in res.tvalues[:k]], "p": [float(v) for v in res.pvalues[:k]],
            "ci_low": [float(v) for v in ci[:k, 0]], "ci_high": [float(v) for v in ci[:k, 1]],
            "df": float(res.df_resid_inference)}


# OLS with CR1 standard errors: G/(G-1)·(N-1)/(N-K), t on G - 1 degrees of freedom.
ols = []
ols_cases = []
# The SUVA audit paper §240.14 fixture: coef (1.0417, 0.9167), CR1 se (0.2503, 0.0579).
ols_cases.append(([[float(i)] for i in range(8)], [1.0, 2.5, 2.0, 4.5, 4.0, 6.5, 5.5, 8.0], [0, 0, 1, 1, 2, 2, 3, 3], True))
# Unbalanced clusters (one singleton), a continuous, a binary and a motive-sign regressor.
sizes = [1, 2, 3, 5, 8, 3, 6, 4, 9]
cl = [f"config-{g}" for g, s in enumerate(sizes) for _ in range(s)]
n = len(cl)
x1 = np.round(arng.normal(0, 1, n), 4)
x2 = arng.integers(0, 2, n).astype(float)
x3 = arng.integers(-1, 2, n).astype(float)
ce = {c: arng.normal(0, 0.7) for c in dict.fromkeys(cl)}
y = np.round(0.3 + 0.8 * x1 - 0.5 * x2 + 0.25 * x3 + np.array([ce[c] for c in cl]) + arng.normal(0, 0.5, n), 4)
ols_cases.append(([[float(a), float(b), float(c)] for a, b, c in zip(x1, x2, x3)], [float(v) for v in y], cl, True))
# A linear probability model: a binary action on three stated-value indicators, 12 clusters.
sizes = [3, 7, 4, 10, 5, 6, 3, 8, 4, 9, 5, 6]
cl = [int(100 + g) for g, s in enumerate(sizes) for _ in range(s)]
n = len(cl)
W = (arng.uniform(size=(n, 3)) < [0.5, 0.3, 0.6]).astype(float)
p = np.clip(0.2 + 0.4 * W[:, 0] + 0.2 * W[:, 1] - 0.1 * W[:, 2], 0, 1)
act = (arng.uniform(size=n) < p).astype(float)
ols_cases.append(([[float(v) for v in row] for row in W], [float(v) for v in act], cl, True))
# No intercept, five clusters.
cl = [g for g, s in enumerate([4, 2, 6, 3, 5]) for _ in range(s)]
n = len(cl)
X = np.round(arng.normal(1, 1, (n, 2)), 4)
y = np.round(X @ [0.5, -0.2] + arng.normal(0, 0.3, n), 4)
ols_cases.append(([[float(v) for v in row] for row in X], [float(v) for v in y], cl, False))
for X, y, cl, intercept in ols_cases:
    Xd = np.asarray(X, float)
    if intercept:
        Xd = sm.add_constant(Xd, has_constant="add")
    res = cluster_fit(Xd, y, cl)
    e = {"x": X, "y": y, "clusters": cl, "intercept": intercept, "n": len(y), "k": Xd.shape[1],
         "g": len(set(cl)), **fit_entry(res, Xd.shape[1]),
         "call": "statsmodels.api.OLS(y, x [with add_constant]).fit(cov_type='cluster', cov_kwds={'groups': clusters}, use_t=True)"}
    ols.append(e)
out["ols_cr1"] = ols

# Fixed effects per group by within-group demeaning, CR1 by cluster. Two conventions for K in
# (N-1)/(N-K), both statsmodels: `dummies` counts the absorbed group effects (OLS on x and a full
# set of group dummies, as Stata's areg), `within` does not (OLS on the demeaned data, as when
# the groups are nested in the clusters).
fe = []
fe_cases = []
# Prompts with unequal replicate counts (one singleton), clustered by prompt (nested).
reps = [2, 5, 3, 7, 4, 1, 6, 3, 5, 4]
grp = [f"prompt-{g}" for g, r in enumerate(reps) for _ in range(r)]
n = len(grp)
base = {g: arng.uniform(0.1, 0.8) for g in dict.fromkeys(grp)}
W = (arng.uniform(size=(n, 3)) < [0.5, 0.4, 0.55]).astype(float)
p = np.clip(np.array([base[g] for g in grp]) + 0.3 * W[:, 0] - 0.2 * W[:, 1] + 0.05 * W[:, 2], 0, 1)
act = (arng.uniform(size=n) < p).astype(float)
fe_cases.append(([[float(v) for v in row] for row in W], [float(v) for v in act], grp, None, "within"))
# Prompts crossed with runs: cluster by run, so the groups are not nested in the clusters.
grp = [int(g) for g in arng.integers(0, 7, 48)]
runs = [f"run-{i % 6}" for i in range(48)]
X = np.round(arng.normal(0, 1, (48, 2)), 4)
ge = {g: arng.normal(0, 1) for g in dict.fromkeys(grp)}
y = np.round(X @ [0.7, 0.2] + np.array([ge[g] for g in grp]) + arng.normal(0, 0.4, 48), 4)
fe_cases.append(([[float(v) for v in row] for row in X], [float(v) for v in y], grp, runs, "dummies"))
# Prompts nested in coarser clusters (payoff configurations of three to four prompts).
reps = [3, 2, 4, 3, 5, 2, 3, 4, 2, 3, 4, 3, 2, 5]
grp = [g for g, r in enumerate(reps) for _ in range(r)]
conf = [g // 4 for g in grp]
n = len(grp)
X = np.column_stack([np.round(arng.normal(0, 1, n), 4), arng.integers(0, 2, n).astype(float)])
ge = {g: arng.normal(0, 1) for g in dict.fromkeys(grp)}
y = np.round(X @ [-0.4, 0.9] + np.array([ge[g] for g in grp]) + arng.normal(0, 0.5, n), 4)
fe_cases.append(([[float(v) for v in row] for row in X], [float(v) for v in y], grp, conf, "within"))
for X, y, grp, clusters, auto in fe_cases:
    Xa = np.asarray(X, float)
    ya = np.asarray(y, float)
    gc = codes_of(grp)
    cl = grp if clusters is None else clusters
    k = Xa.shape[1]
    D = np.eye(gc.max() + 1)[gc]
    dummies = cluster_fit(np.column_stack([Xa, D]), ya, cl)
    gm_x = np.array([Xa[gc == g].mean(axis=0) for g in range(gc.max() + 1)])[gc]
    gm_y = np.array([ya[gc == g].mean() for g in range(gc.max() + 1)])[gc]
    within = cluster_fit(Xa - gm_x, ya - gm_y, cl)
    fe.append({"x": X, "y": y, "groups": grp, "clusters": clusters, "n": len(y), "k": k,
               "n_groups": int(gc.max() + 1), "g": len(set(cl)), "auto": auto,
               "dummies": fit_entry(dummies, k), "within": fit_entry(within, k),
               "call": "dummies: statsmodels.api.OLS(y, [x, one dummy per group]).fit(cov_type='cluster', "
                       "cov_kwds={'groups': clusters}, use_t=True), first k terms; within: the same call on "
                       "group-demeaned y and x without dummies; clusters default to the groups"})
out["fe_cr1"] = fe

# Logit with average marginal effects (statsmodels' default dy/dx for every regressor, dummies
# included, as continuous), nonrobust and with CR1 clusters.
logit = []
n = 160
x1 = np.round(arng.normal(0, 1, n), 4)
x2 = arng.integers(0, 2, n).astype(float)
x3 = arng.integers(0, 2, n).astype(float)
eta = -0.3 + 0.9 * x1 + 0.8 * x2 - 0.6 * x3
yl = (arng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
cl = [f"prompt-{i % 23}" for i in range(n)]
Xl = [[float(a), float(b), float(c)] for a, b, c in zip(x1, x2, x3)]
logit_cases = [(Xl, [float(v) for v in yl], None, True), (Xl, [float(v) for v in yl], cl, True)]
n = 70
X = np.round(arng.normal(0.3, 1, (n, 2)), 4)
y2 = (arng.uniform(size=n) < 1 / (1 + np.exp(-(X @ [1.1, -0.7])))).astype(float)
logit_cases.append(([[float(v) for v in row] for row in X], [float(v) for v in y2], None, False))
for X, y, clusters, intercept in logit_cases:
    Xd = np.asarray(X, float)
    if intercept:
        Xd = sm.add_constant(Xd, has_constant="add")
    model = sm.Logit(np.asarray(y), Xd)
    if clusters is None:
        res = model.fit(disp=0)
        how = "fit(disp=0)"
    else:
        res = model.fit(disp=0, cov_type="cluster", cov_kwds={"groups": codes_of(clusters)})
        how = "fit(disp=0, cov_type='cluster', cov_kwds={'groups': clusters})"
    me = res.get_margeff(at="overall", method="dydx")
    ci = res.conf_int()
    mci = me.conf_int()
    logit.append({"x": X, "y": y, "clusters": clusters, "intercept": intercept,
                  "coef": [float(v) for v in res.params], "se": [float(v) for v in res.bse],
                  "z": [float(v) for v in res.tvalues], "p": [float(v) for v in res.pvalues],
                  "ci_low": [float(v) for v in ci[:, 0]], "ci_high": [float(v) for v in ci[:, 1]],
                  "loglik": float(res.llf),
                  "ame": [float(v) for v in me.margeff], "ame_se": [float(v) for v in me.margeff_se],
                  "ame_z": [float(v) for v in me.tvalues], "ame_p": [float(v) for v in me.pvalues],
                  "ame_ci_low": [float(v) for v in mci[:, 0]], "ame_ci_high": [float(v) for v in mci[:, 1]],
                  "call": f"statsmodels.api.Logit(y, x [with add_constant]).{how}.get_margeff(at='overall', method='dydx')"})
out["logit_ame"] = logit

# Occurrence: the share of responses that state each code at least once, with Wilson intervals.
occ = []
resp = [list(arng.choice(CODES, size=int(arng.integers(0, 5)), p=[0.15, 0.05, 0.15, 0.2, 0.1, 0.35]))
        for _ in range(41)]
resp = [[str(c) for c in r] for r in resp]
for codes, alpha in ((CODES + ["ingroup"], 0.05), (None, 0.10)):
    labs = codes if codes is not None else sorted({c for r in resp for c in r})
    ind = np.array([[c in r for c in labs] for r in resp], float)
    counts = ind.sum(axis=0)
    ci = [proportion_confint(int(k), len(resp), alpha=alpha, method="wilson") for k in counts]
    occ.append({"responses": resp, "codes": codes, "alpha": alpha, "all_codes": labs,
                "count": [int(v) for v in counts], "share": [float(v) for v in ind.mean(axis=0)],
                "low": [float(lo) for lo, _ in ci], "high": [float(hi) for _, hi in ci],
                "call": "numpy mean of the indicator 'code appears at least once'; statsmodels.stats.proportion."
                        "proportion_confint(count, n, alpha, method='wilson')"})
out["occurrence"] = occ

# Two-sample (Welch) TOST: a model's runs against a lab's own human runs. Its own generator, so
# the draws above are unchanged.
from statsmodels.stats.weightstats import ttost_ind
rng_two = np.random.default_rng(20261204)
tost_two = []
for x, y, eps in (
    (list(rng_two.normal(0.46, 0.08, 30)), list(rng_two.normal(0.48, 0.12, 24)), 0.10),
    (list(rng_two.normal(0.30, 0.02, 6)), list(rng_two.normal(0.40, 0.10, 9)), 0.05),
    (list(rng_two.normal(0.41, 0.03, 12)), list(rng_two.normal(0.40, 0.03, 40)), 0.05),
    ([0.52, 0.47, 0.55], [0.50, 0.49, 0.61, 0.44], 0.10),
):
    x = [float(round(v, 6)) for v in x]
    y = [float(round(v, 6)) for v in y]
    p, lower, upper = ttost_ind(np.array(x), np.array(y), -eps, eps, usevar="unequal")
    cm = __import__("statsmodels.stats.weightstats", fromlist=["CompareMeans"]).CompareMeans.from_data(np.array(x), np.array(y))
    lo, hi = cm.tconfint_diff(alpha=0.10, usevar="unequal")
    tost_two.append({"x": x, "y": y, "margin": eps, "p": float(p), "p_lower": float(lower[1]), "p_upper": float(upper[1]),
                     "df": float(lower[2]), "ci_low": float(lo), "ci_high": float(hi),
                     "call": "statsmodels.stats.weightstats.ttost_ind(x, y, -margin, margin, usevar='unequal'); "
                             "CompareMeans.from_data(x, y).tconfint_diff(alpha=0.10, usevar='unequal')"})
out["tost_welch"] = tost_two

json.dump(out, sys.stdout, indent=1)
sys.stdout.write("\n")
