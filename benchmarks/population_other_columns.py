"""Issue 23's protocol with other sensitive columns of the same real datasets.

The protocol's populations (``population_designs.real``) audit each dataset by its usual
sensitive columns. These four audit other ones, as a user with other questions would,
each a whole dataset with a logistic regression fitted on all its rows (the truth its
rate per group on all rows), samples of ``n`` rows drawn i.i.d. from them:

* ``adult-race``: Adult by race alone (5 groups, Amer-Indian-Eskimo 1% of rows); sex is
  a feature;
* ``compas-agecat-sex``: COMPAS by age category x sex (6 groups), age itself left out;
* ``german-foreign-job``: German credit by foreign worker x job (8 groups, 2-611 rows:
  a group of 2 rows with a rate of 0, another with a rate of 1);
* ``titanic-embarked-sex``: Titanic (the CSV of ``../shared/datasets``) by port of
  embarkation x sex (6 groups): every man and woman embarked at Queenstown is decided
  negatively (a rate, or a false positive rate, of exactly 0).

Groups whose rate is exactly 0 or 1 are what these add: the rows of such a group all
decide alike, its direct rate is exact, and a metric (DI = 0, SP = 1) sits on the
boundary. Run: ``OMP_NUM_THREADS=1 python benchmarks/population_other_columns.py --reps
40 --labels`` (``--which`` for some of them).
"""
import os
import sys

import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import population_designs as designs  # noqa: E402

from skfairverify.datasets import load_adult, load_compas, load_german  # noqa: E402

DATASETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
                        "datasets")


def adult_race():
    d = load_adult()
    X = d.data.drop(columns=["split", "fnlwgt", "native-country", "education"]).dropna()
    num = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
    cat = ["workclass", "marital-status", "occupation", "relationship", "sex"]
    return designs.Real("adult-race", X, d.target.loc[X.index], ["race"], num, cat)


def compas_age_sex():
    d = load_compas()
    num = ["priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count"]
    cat = ["c_charge_degree", "race"]
    return designs.Real("compas-agecat-sex", d.data[num + cat + ["age_cat", "sex"]],
                        d.target, ["age_cat", "sex"], num, cat)


def german_foreign_job():
    d = load_german()
    num = ["duration", "credit_amount", "age", "residence_since"]
    cat = ["checking_status", "credit_history", "purpose", "savings_status"]
    return designs.Real("german-foreign-job", d.data[num + cat + ["foreign_worker", "job"]],
                        d.target, ["foreign_worker", "job"], num, cat)


def titanic_embarked_sex():
    path = os.path.join(DATASETS, "titanic", "titanic.csv")
    if not os.path.exists(path):
        raise SystemExit(f"titanic-embarked-sex needs {path}")
    t = pd.read_csv(path).dropna(subset=["Age", "Embarked"])
    for c in ("Sex", "Embarked"):
        t[c] = t[c].astype("category")
    t["Pclass"] = t["Pclass"].astype(str).astype("category")
    num, cat = ["Age", "SibSp", "Parch", "Fare"], ["Pclass"]
    return designs.Real("titanic-embarked-sex", t[num + cat + ["Embarked", "Sex"]],
                        t["Survived"], ["Embarked", "Sex"], num, cat)


SIZES = {"adult-race": [1500, 5000], "compas-agecat-sex": [600, 2000],
         "german-foreign-job": [300, 800], "titanic-embarked-sex": [300, 600]}
POPULATIONS = {"adult-race": adult_race, "compas-agecat-sex": compas_age_sex,
               "german-foreign-job": german_foreign_job,
               "titanic-embarked-sex": titanic_embarked_sex}


if __name__ == "__main__":
    designs.protocol_main(__doc__.splitlines()[0], POPULATIONS, SIZES)
