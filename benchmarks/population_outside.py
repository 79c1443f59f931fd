"""Issue 23's protocol on real data that is not in the repository: statsmodels' datasets.

Three more populations for ``bench_population.py --protocol``, each a whole dataset with
a model fitted on all its rows (as ``population_designs.real``): ``fair`` (6,366 women,
an affair in the survey; religiousness x children, 8 groups), ``randhie`` (RAND health
insurance experiment, 20,190 person-years, a doctor's visit; health x deductible, 8
groups) and ``anes96`` (944 voters of 1996, a vote for Clinton; education x income, 9
groups). Needs statsmodels (not a dependency of the package: ``pip install statsmodels``).

Run: ``OMP_NUM_THREADS=1 python benchmarks/population_outside.py --reps 40 --labels``.
"""
import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import population_designs as designs  # noqa: E402

try:
    import statsmodels.api as sm
except ImportError as exc:  # pragma: no cover - optional
    raise SystemExit("population_outside.py needs statsmodels: pip install statsmodels") from exc


def fair():
    """Affairs survey: an affair, by religiousness (4) x children (2)."""
    d = sm.datasets.fair.load_pandas().data
    X = pd.DataFrame({"age": d.age, "yrs_married": d.yrs_married, "educ": d.educ,
                      "occupation": d.occupation.astype(int).astype(str).astype("category"),
                      "rate_marriage": d.rate_marriage.astype(int).astype(str).astype("category"),
                      "religious": d.religious.astype(int).astype(str).astype("category"),
                      "children": pd.Categorical(np.where(d.children > 0, "yes", "no"))})
    return designs.Real("fair", X, (d.affairs > 0).astype(int), ["religious", "children"],
                        ["age", "yrs_married", "educ"], ["occupation", "rate_marriage"])


def randhie():
    """RAND health insurance: a doctor's visit, by health (4) x deductible (2)."""
    d = sm.datasets.randhie.load_pandas().data
    health = np.select([d.hlthp == 1, d.hlthf == 1, d.hlthg == 1],
                       ["poor", "fair", "good"], "excellent")
    X = pd.DataFrame({"lncoins": d.lncoins, "lpi": d.lpi, "physlm": d.physlm, "disea": d.disea,
                      "fmde": d.fmde, "health": pd.Categorical(health),
                      "idp": pd.Categorical(np.where(d.idp == 1, "deductible", "none"))})
    return designs.Real("randhie", X, (d.mdvis > 0).astype(int), ["health", "idp"],
                        ["lncoins", "lpi", "physlm", "disea", "fmde"], [])


def anes():
    """ANES 1996: a vote for Clinton, by education (3) x income (3)."""
    d = sm.datasets.anes96.load_pandas().data
    educ = pd.Categorical(np.select([d.educ <= 3, d.educ <= 5], ["hs", "college"], "degree"))
    inc = pd.Categorical(np.select([d.income <= 10, d.income <= 18], ["low", "mid"], "high"))
    X = pd.DataFrame({"logpopul": d.logpopul, "TVnews": d.TVnews, "selfLR": d.selfLR,
                      "age": d.age, "PID": d.PID, "educ": educ, "income": inc})
    return designs.Real("anes96", X, d.vote.astype(int), ["educ", "income"],
                        ["logpopul", "TVnews", "selfLR", "age", "PID"], [])


SIZES = {"fair": [800, 2500], "randhie": [1500, 5000], "anes96": [300]}
POPULATIONS = {"fair": fair, "randhie": randhie, "anes96": anes}


if __name__ == "__main__":
    designs.protocol_main(__doc__.splitlines()[0], POPULATIONS, SIZES)
