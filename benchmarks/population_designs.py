"""Populations for ``bench_population.py --protocol``: designs built to break a default.

Each population has a fixed model and the truth of every group's rate (the model's
positive rate per group on the whole population), and draws samples of ``n`` rows:

* synthetic designs (truth on 1,000,000 rows drawn from the design): ``additive`` (the
  issue 16 design: Gaussian features shifted by two sensitive attributes, additively),
  ``interaction`` (the small intersection is not what the two main effects predict),
  ``skewed`` (log-normal, Poisson, Student-t with 2 degrees of freedom, exponential and
  mixed features), ``no-signal`` (features independent of the groups), ``chain`` (an
  AR(1) dependency chain between the features), ``latent-factor`` (ten features loading
  on one latent factor: a tree-augmented network cannot hold it), ``xor`` (a product
  and an absolute-value dependence the network misses), ``three-attributes`` (12
  groups of three attributes, down to a few rows), ``reads-sensitive`` (the model reads
  a sensitive attribute), and ``network-true`` (categorical features drawn from a
  Bayesian network of the verifier's own family, a linear model on their one-hot
  codes: the network is then the true distribution, for the size of the model check);
* real data (each dataset as its own population, the model fitted on all its rows, a
  sample drawn with replacement, i.e. i.i.d. from the dataset): ``adult`` (sex x race,
  10 groups), ``german`` (sex x age group), ``compas`` (race x sex, 12 groups down to
  a few rows), and from the raw CSVs of ``--datasets`` (``../shared/datasets``) when
  present: ``titanic`` (sex x class), ``communities`` (share of Black residents above
  the median x urban), ``ricci`` (race, 3 groups, 118 rows).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

SYNTHETIC = ("additive", "interaction", "skewed", "no-signal", "chain", "latent-factor",
             "xor", "three-attributes", "reads-sensitive", "network-true")
REAL = ("adult", "german", "compas", "titanic", "communities", "ricci")


def _pipeline(numeric, categorical):
    steps = [(StandardScaler(), list(numeric))] if numeric else []
    if categorical:
        steps.append((OneHotEncoder(handle_unknown="ignore"), list(categorical)))
    return make_pipeline(make_column_transformer(*steps), LogisticRegression(max_iter=2000))


def _group_truth(X, model, sensitive, y=None) -> dict:
    """Rate name -> {group key (strings): the model's rate on the rows}."""
    decided = pd.Series(model.predict(X) == model.classes_[1], index=X.index)
    keys = X[sensitive].astype(str).apply(tuple, axis=1)
    out = {"positive_rate": decided.groupby(keys).mean().to_dict()}
    if y is not None:
        y = pd.Series(np.asarray(y), index=X.index)
        for name, label in (("true_positive_rate", 1), ("false_positive_rate", 0)):
            rows = y == label
            out[name] = decided[rows].groupby(keys[rows]).mean().to_dict()
    return out


class Population:
    """A fixed model, the truth per group, and samples of ``n`` rows."""

    name: str
    sensitive: list
    model: object
    truth: dict

    def sample(self, n: int, rng):  # pragma: no cover - overridden
        raise NotImplementedError


class Synthetic(Population):
    def __init__(self, name, generate, sensitive=("a1", "a2"), reads=None, model=None):
        self.name, self.generate, self.sensitive = name, generate, list(sensitive)
        rng = np.random.default_rng(12345)
        X = generate(20_000, rng)
        if model is None:
            features = reads or [c for c in X.columns if c not in self.sensitive]
            z = X[features].to_numpy(float)
            z = (z - z.mean(0)) / z.std(0)
            beta = np.resize([1.0, 0.8, -0.6, 0.5, 0.3, -0.4, 0.7, 0.2, -0.3, 0.5],
                             len(features))
            y = rng.random(len(X)) < 1 / (1 + np.exp(-(z @ beta - 0.2)))
            model = _pipeline(features, []).fit(X, y)
        self.model = model
        self.truth = _group_truth(generate(1_000_000, np.random.default_rng(999)), model,
                                  self.sensitive)

    def sample(self, n, rng):
        return self.generate(n, rng), None


def _two_attributes(n, rng, p2=0.08):
    return (rng.random(n) < 0.5).astype(int), (rng.random(n) < p2).astype(int)


def _gaussian(shift, d=5, rho=0.0):
    s1 = np.resize([0.5, -0.4, 0.3, 0.0, 0.4], d)
    s2 = np.resize([0.8, 0.4, -0.6, 0.5, 0.3], d)
    idx = np.arange(d)
    chol = np.linalg.cholesky(rho ** np.abs(idx[:, None] - idx[None, :]))
    means = np.array([shift(g1, g2, s1, s2) for g1, g2 in ((0, 0), (0, 1), (1, 0), (1, 1))])

    def generate(n, rng):
        a1, a2 = _two_attributes(n, rng)
        x = means[2 * a1 + a2] + rng.standard_normal((n, d)) @ chol.T
        X = pd.DataFrame(x, columns=[f"x{j}" for j in range(d)])
        X["a1"], X["a2"] = a1, a2
        return X

    return generate


def _skewed(n, rng):
    a1, a2 = _two_attributes(n, rng)
    g = 2 * a1 + a2
    x0 = rng.lognormal(0.3 * a1 - 0.2 * a2, 0.8, n)
    X = pd.DataFrame({
        "x0": x0,
        "x1": rng.poisson(np.array([1.0, 3.0, 2.0, 0.5])[g]),
        "x2": rng.standard_t(2, n) * np.array([1.0, 1.8, 0.7, 1.3])[g],
        "x3": rng.exponential(np.array([1.0, 0.5, 2.0, 1.0])[g]),
        "x4": (rng.random(n) < np.array([0.3, 0.6, 0.4, 0.8])[g]) + 0.5 * x0,
    })
    X["a1"], X["a2"] = a1, a2
    return X


def _latent_factor(n, rng, d=10):
    a1, a2 = _two_attributes(n, rng)
    f = rng.standard_normal(n) + 0.6 * a1 - 0.9 * a2
    loads = np.resize([0.9, 0.8, 0.7, 0.85, 0.6, 0.75, 0.9, 0.65, 0.8, 0.7], d)
    x = f[:, None] * loads[None, :] + 0.5 * rng.standard_normal((n, d))
    x[:, 1] = np.exp(x[:, 1])
    X = pd.DataFrame(x, columns=[f"x{j}" for j in range(d)])
    X["a1"], X["a2"] = a1, a2
    return X


def _xor(n, rng, d=6):
    a1, a2 = _two_attributes(n, rng)
    u = rng.standard_normal((n, d))
    x = u.copy()
    x[:, 1] = np.abs(u[:, 0]) * np.sign(u[:, 1]) + 0.3 * a1
    x[:, 2] = u[:, 0] * u[:, 1] + 0.5 * a2 + 0.3 * u[:, 2]
    x[:, 3] = x[:, 2] + 0.5 * x[:, 1] + 0.3 * u[:, 3]
    X = pd.DataFrame(x, columns=[f"x{j}" for j in range(d)])
    X["a1"], X["a2"] = a1, a2
    return X


def _three_attributes(n, rng):
    a1 = (rng.random(n) < 0.5).astype(int)
    a2 = rng.choice(3, n, p=[0.75, 0.17, 0.08])
    a3 = (rng.random(n) < 0.3).astype(int)
    mu = (0.4 * a1[:, None] * np.array([1, -0.5, 0.3, 0.2])
          + 0.5 * (a2[:, None] == 1) * np.array([0.5, 0.5, -0.2, 0])
          - 0.6 * (a2[:, None] == 2) * np.array([1, 0, 0.4, 0.3]) + 0.3 * a3[:, None])
    X = pd.DataFrame(mu + rng.standard_normal((n, 4)), columns=[f"x{j}" for j in range(4)])
    X["a1"], X["a2"], X["a3"] = a1, a2, a3
    return X


class _DiscreteNetwork:
    """Categorical features from a tree-augmented network with the sensitive parents.

    ``c0`` depends on the groups; ``c_j`` on the groups and ``c_{j-1}``: a network of the
    verifier's own structure family (max_indegree=1 beside the sensitive parents).
    """

    def __init__(self, d=4, k=4, seed=7):
        rng = np.random.default_rng(seed)
        self.d, self.k = d, k
        self.first = rng.dirichlet(np.ones(k) * 2, size=4)  # group -> c0
        self.next = [rng.dirichlet(np.ones(k) * 2, size=(4, k)) for _ in range(d - 1)]

    def __call__(self, n, rng):
        a1, a2 = _two_attributes(n, rng, p2=0.15)
        g = 2 * a1 + a2
        cols = [self._draw(self.first[g], rng)]
        for table in self.next:
            cols.append(self._draw(table[g, cols[-1]], rng))
        X = pd.DataFrame({f"c{j}": pd.Categorical(c, categories=range(self.k))
                          for j, c in enumerate(cols)})
        X["a1"], X["a2"] = a1, a2
        return X

    @staticmethod
    def _draw(probs, rng):
        return (probs.cumsum(axis=1) > rng.random(len(probs))[:, None]).argmax(axis=1)


def _network_true():
    generate = _DiscreteNetwork()
    rng = np.random.default_rng(5)
    X = generate(20_000, rng)
    codes = X[[f"c{j}" for j in range(generate.d)]].apply(lambda c: c.cat.codes)
    beta = rng.normal(0, 1.0, (generate.d, generate.k))
    score = sum(beta[j][codes[f"c{j}"]] for j in range(generate.d)) - 0.3
    y = rng.random(len(X)) < 1 / (1 + np.exp(-score))
    model = _pipeline([], [f"c{j}" for j in range(generate.d)]).fit(X, y)
    return Synthetic("network-true", generate, model=model)


def synthetic(name: str) -> Synthetic:
    additive = _gaussian(lambda g1, g2, s1, s2: g1 * s1 + g2 * s2)
    makers = {
        "additive": lambda: Synthetic(name, additive),
        "interaction": lambda: Synthetic(name, _gaussian(
            lambda g1, g2, s1, s2: g1 * s1 + g2 * s2 - 2.2 * g1 * g2 * (s1 + s2))),
        "skewed": lambda: Synthetic(name, _skewed),
        "no-signal": lambda: Synthetic(name, _gaussian(lambda g1, g2, s1, s2: 0 * s1)),
        "chain": lambda: Synthetic(name, _gaussian(lambda g1, g2, s1, s2: g1 * s1 + g2 * s2,
                                                   rho=0.6)),
        "latent-factor": lambda: Synthetic(name, _latent_factor),
        "xor": lambda: Synthetic(name, _xor),
        "three-attributes": lambda: Synthetic(name, _three_attributes,
                                              sensitive=("a1", "a2", "a3")),
        "reads-sensitive": lambda: Synthetic(name, additive,
                                             reads=["x0", "x1", "x2", "x3", "x4", "a1"]),
        "network-true": _network_true,
    }
    return makers[name]()


class Real(Population):
    def __init__(self, name, X, y, sensitive, numeric, categorical):
        self.name, self.sensitive = name, list(sensitive)
        self.X = X.reset_index(drop=True)
        self.y = np.asarray(y)
        self.model = _pipeline(numeric, categorical).fit(self.X, self.y)
        self.truth = _group_truth(self.X, self.model, self.sensitive, self.y)

    def sample(self, n, rng):
        rows = rng.integers(0, len(self.X), n)  # i.i.d. from the dataset
        return self.X.iloc[rows].reset_index(drop=True), self.y[rows]


def _bundled(name):
    from skfairverify.datasets import load_adult, load_compas, load_german

    if name == "adult":
        d = load_adult()
        X = d.data.drop(columns=["split", "fnlwgt", "native-country", "education"]).dropna()
        return (X, d.target.loc[X.index], ["sex", "race"],
                ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"],
                ["workclass", "marital-status", "occupation", "relationship"])
    if name == "german":
        d = load_german()
        num = ["duration", "credit_amount", "installment_commitment", "age",
               "existing_credits"]
        cat = ["checking_status", "credit_history", "savings_status", "employment",
               "housing"]
        return d.data[num + cat + ["sex", "age_group"]], d.target, ["sex", "age_group"], \
            num, cat
    d = load_compas()
    num = ["age", "priors_count", "juv_fel_count", "juv_misd_count"]
    cat = ["c_charge_degree", "age_cat"]
    return d.data[num + cat + ["race", "sex"]], d.target, ["race", "sex"], num, cat


def _from_csv(name, folder):
    if name == "titanic":
        t = pd.read_csv(os.path.join(folder, "titanic", "titanic.csv"))
        t = t.dropna(subset=["Age", "Embarked"])
        for c in ("Sex", "Embarked"):
            t[c] = t[c].astype("category")
        t["Pclass"] = t["Pclass"].astype(str).astype("category")
        num, cat = ["Age", "SibSp", "Parch", "Fare"], ["Embarked"]
        return t[num + cat + ["Sex", "Pclass"]], t["Survived"], ["Sex", "Pclass"], num, cat
    if name == "communities":
        names = [line.split()[1] for line in
                 open(os.path.join(folder, "communities", "communities.names"))
                 if line.startswith("@attribute")]
        c = pd.read_csv(os.path.join(folder, "communities", "communities.data"),
                        header=None, names=names, na_values="?")
        num = ["medIncome", "PctUnemployed", "PctNotHSGrad", "PctFam2Par", "PctHousNoPhone",
               "PopDens", "PctPopUnderPov"]
        X = c[num].copy()
        X["black"] = pd.Categorical(np.where(c["racepctblack"] > 0.06, "high", "low"))
        X["urban"] = pd.Categorical(np.where(c["pctUrban"] > 0.5, "urban", "rural"))
        return X, (c["ViolentCrimesPerPop"] < 0.28).astype(int), ["black", "urban"], num, []
    r = pd.read_csv(os.path.join(folder, "ricci", "ricci.csv"))
    for c in ("Race", "Position"):
        r[c] = r[c].astype("category")
    return (r[["Oral", "Written", "Position", "Race"]], (r["Combine"] >= 70).astype(int),
            ["Race"], ["Oral", "Written"], ["Position"])


def real(name: str, folder: str) -> Real | None:
    """A real dataset as a population (None when its CSV is not in ``folder``)."""
    if name in ("adult", "german", "compas"):
        return Real(name, *_bundled(name))
    if not os.path.isdir(os.path.join(folder, name)):
        return None
    return Real(name, *_from_csv(name, folder))


def protocol_main(description: str, populations: dict, sizes: dict) -> None:
    """Command line of a protocol over more populations (``population_outside.py``, ...).

    ``populations``: name -> a function building the :class:`Real` population;
    ``sizes``: name -> the sample sizes. The samples' seeds are those of
    ``bench_population.py --protocol``.
    """
    import argparse

    import bench_population as B

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--labels", action="store_true")
    parser.add_argument("--network-draws", type=int, default=0)
    parser.add_argument("--prior", default="bdeu", choices=["bdeu", "hierarchical"])
    parser.add_argument("--lever", default="today")  # read by protocol_fit's callers only
    parser.add_argument("--which", nargs="*", default=list(sizes), choices=list(sizes))
    args = parser.parse_args()
    for name in args.which:
        pop = populations[name]()
        for n in sizes[name]:
            groups, metrics, seconds, warned = [], [], [], []
            for r in range(args.reps):
                gr, me, se, wa = B.protocol_fit(pop, n, 1000 * n + r, args)
                groups += gr
                metrics.append(me)
                seconds.append(se)
                warned.append(wa)
            summary = B.protocol_summary(groups, metrics, seconds, warned)
            print(name, n, {k: round(float(v), 3) for k, v in summary.items()}, flush=True)
