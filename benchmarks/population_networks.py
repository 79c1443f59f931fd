"""Issue 23's protocol on populations drawn from Bayesian networks the package never learned.

Two more populations for ``bench_population.py --protocol``, each 30,000 rows sampled
once from one of pgmpy's bundled example networks (``pgmpy.utils.get_example_model``;
no download), a model fitted on all of them (as ``population_designs.real``), samples of
``n`` rows i.i.d. from them:

* ``insurance`` (Binder et al. 1997, 27 variables): an accident, by age (3) x
  socio-economic class (4): 12 groups, the wealthy ones 0.2%-0.6% of the rows (about 2-6
  rows in a sample of 1,000); ten categorical features, some far from the sensitive
  attributes in the true network;
* ``child`` (Spiegelhalter 1992, 20 variables): a cyanotic heart disease (TGA or Fallot),
  by the two roots' descendants ``Sick`` x ``BirthAsphyxia``; seven categorical reports.

Neither network is tree-shaped nor of the package's structure search's form, so the
learned network is misspecified in ways the synthetic designs do not choose.

Run: ``OMP_NUM_THREADS=1 python benchmarks/population_networks.py --reps 30 --labels``.
"""
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import population_designs as designs  # noqa: E402


def _sample(name: str, n: int, seed: int):
    from pgmpy.sampling import BayesianModelSampling
    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():  # pgmpy's own deprecation of get_example_model
        warnings.simplefilter("ignore", FutureWarning)
        model = get_example_model(name)
        return BayesianModelSampling(model).forward_sample(size=n, seed=seed,
                                                           show_progress=False)


def _categorical(frame, columns):
    return frame[columns].astype(str).astype("category")


def insurance():
    """Insurance network: an accident, by age x socio-economic class."""
    d = _sample("insurance", 30_000, 1)
    features = ["DrivHist", "MakeModel", "VehicleYear", "Mileage", "HomeBase", "CarValue",
                "GoodStudent", "AntiTheft", "SeniorTrain", "OtherCar"]
    X = _categorical(d, features + ["Age", "SocioEcon"])
    y = (d["Accident"].astype(str) != "None").astype(int)
    return designs.Real("insurance", X, y, ["Age", "SocioEcon"], [], features)


def child():
    """Child network: TGA or Fallot, by Sick x BirthAsphyxia."""
    d = _sample("child", 30_000, 2)
    features = ["LVHreport", "LowerBodyO2", "RUQO2", "CO2Report", "XrayReport",
                "GruntingReport", "Age"]
    X = _categorical(d, features + ["Sick", "BirthAsphyxia"])
    y = d["Disease"].astype(str).isin(["TGA", "Fallot"]).astype(int)
    return designs.Real("child", X, y, ["Sick", "BirthAsphyxia"], [], features)


SIZES = {"insurance": [1000, 3000], "child": [800, 3000]}
POPULATIONS = {"insurance": insurance, "child": child}


if __name__ == "__main__":
    designs.protocol_main(__doc__.splitlines()[0], POPULATIONS, SIZES)
