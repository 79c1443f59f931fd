"""Readers of XGBoost and LightGBM binary classifiers, from their own JSON dumps.

* XGBoost (``get_booster().get_dump(dump_format="json")``): a split ``x < c`` (yes)
  in float32, read as ``x <= largest float32 below c``; a NaN goes to ``missing`` (a
  ``missing`` parameter other than NaN is refused); the
  leaves add in float32 after the base margin (the logit of ``base_score``); the
  decision, ``sigmoid(margin) > 0.5`` in float32, is a threshold on the margin found
  by bisection over the float32 values (:func:`least_positive`).
* LightGBM (``booster_.dump_model()``): a split ``x <= threshold`` in float64; a NaN
  goes to ``default_left`` (``missing_type="NaN"``) or is read as 0
  (``missing_type="None"``); ``missing_type="Zero"``, categorical splits and linear
  leaves (``linear_tree=True``) are refused; the leaves add in float64; the decision,
  ``p > 1 - p`` for the sigmoid ``p`` of the raw score (``predict``'s argmax), is a
  threshold on the raw score found by the same bisection in float64.

Both packages are optional and only imported when a model of theirs is read.
"""

from __future__ import annotations

import json

import numpy as np

from ._structure import TreeEnsemble, largest_below, make_tree

__all__ = ["read_lightgbm", "read_xgboost"]


class _Nodes:
    """Flat node lists filled by a walk of a JSON tree."""

    def __init__(self):
        self.left, self.right, self.feature = [], [], []
        self.threshold, self.missing_left, self.value = [], [], []

    def add(self) -> int:
        for column in (self.left, self.right, self.feature):
            column.append(-1)
        self.threshold.append(np.nan)
        self.missing_left.append(False)
        self.value.append(0.0)
        return len(self.left) - 1

    def tree(self):
        return make_tree(self.left, self.right, self.feature, self.threshold,
                         self.missing_left, self.value)


def _check_binary_booster(model, n_classes: int, objective: str) -> None:
    classes = getattr(model, "classes_", None)
    if classes is None or len(classes) != 2:
        shown = [] if classes is None else list(np.ravel(classes))[:10]
        raise ValueError(
            f"{type(model).__name__} is not a binary classifier (classes {shown}); the "
            "tree-ensemble reader reads binary classifiers only."
        )
    if n_classes > 1 or "binary" not in objective:
        raise ValueError(
            f"{type(model).__name__} has objective {objective!r}; the reader reads binary "
            "logistic classifiers only."
        )


# ----------------------------------------------------------------------- XGBoost
def _xgb_feature(name: str, names) -> int:
    if names is not None:
        return list(names).index(name)
    return int(name[1:])


def _xgb_walk(node: dict, nodes: _Nodes, names) -> int:
    at = nodes.add()
    if "leaf" in node:
        nodes.value[at] = float(np.float32(node["leaf"]))
        return at
    if node.get("split_type", "numerical") not in ("numerical", "0"):
        raise ValueError("XGBoost model with categorical splits: the reader reads "
                         "numeric splits only.")
    children = {child["nodeid"]: child for child in node["children"]}
    nodes.feature[at] = _xgb_feature(node["split"], names)
    nodes.threshold[at] = largest_below([node["split_condition"]], np.float32)[0]
    nodes.missing_left[at] = node["missing"] == node["yes"]
    nodes.left[at] = _xgb_walk(children[node["yes"]], nodes, names)
    nodes.right[at] = _xgb_walk(children[node["no"]], nodes, names)
    return at


def least_positive(positive, dtype) -> float:
    """The least non-negative value of ``dtype`` where the monotone ``positive`` holds.

    Bisection over the bit patterns of the values in ``[0, 1]`` (ordered as the values
    are); ``positive(0)`` must be False and ``positive(1)`` True.

    Examples
    --------
    >>> import numpy as np
    >>> from skfairverify.ensembles._booster_readers import least_positive
    >>> least_positive(lambda x: x > 0.25, np.float64) > 0.25
    True
    """
    itype = np.int32 if np.dtype(dtype) == np.float32 else np.int64
    lo, hi = 0, int(np.array(1, dtype=dtype).view(itype))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if positive(np.array(mid, dtype=itype).view(dtype)):
            hi = mid
        else:
            lo = mid
    return float(np.array(hi, dtype=itype).view(dtype))


def _xgboost_positive(margin) -> bool:
    """XGBoost's decision on a margin: float32 sigmoid above 0.5."""
    one = np.float32(1)
    return bool(one / (one + np.exp(-np.float32(margin))) > np.float32(0.5))


def _lightgbm_positive(raw, sigmoid: float) -> bool:
    """LightGBM's decision on a raw score: ``p > 1 - p`` (predict's argmax)."""
    p = 1.0 / (1.0 + np.exp(-sigmoid * float(raw)))
    return bool(p > 1.0 - p)


def _check_xgb_missing(model) -> None:
    """Refuse a ``missing`` other than NaN: XGBoost then routes that number, not NaN."""
    missing = getattr(model, "get_params", dict)().get("missing", np.nan)
    if missing is not None and not np.isnan(float(missing)):
        raise ValueError(
            f"XGBoost model with missing={missing!r}: XGBoost sends the value {missing!r} "
            "where a node sends missing values, which the reader would read as a number; "
            "the reader reads missing=nan (the default) only.")


def read_xgboost(model) -> TreeEnsemble:
    """Read a binary ``xgboost.XGBClassifier`` (numeric splits, ``gbtree``)."""
    booster = model.get_booster()
    config = json.loads(booster.save_config())
    learner = config["learner"]
    objective = learner["objective"]["name"]
    params = learner["learner_model_param"]
    _check_binary_booster(model, int(params.get("num_class", "0")), objective)
    if objective != "binary:logistic" or learner["gradient_booster"]["name"] != "gbtree":
        raise ValueError(f"XGBoost objective {objective!r} / booster "
                         f"{learner['gradient_booster']['name']!r}: the reader reads "
                         "binary:logistic gbtree models only.")
    _check_xgb_missing(model)
    text = params["base_score"]  # "[4.0333334E-1]" in XGBoost 3, "4.0333334E-1" before
    p = np.float32((json.loads(text) if text.startswith("[") else [float(text)])[0])
    base = np.float32(np.log(p / (np.float32(1) - p)))  # the margin of base_score
    trees = []
    for dump in booster.get_dump(dump_format="json"):
        nodes = _Nodes()
        _xgb_walk(json.loads(dump), nodes, booster.feature_names)
        trees.append(nodes.tree())
    return TreeEnsemble(
        trees=tuple(trees), base_score=float(base),
        decision_threshold=least_positive(_xgboost_positive, np.float32), strict=False,
        input_dtype=np.dtype(np.float32), score_dtype=np.dtype(np.float32),
        n_features=int(params["num_feature"]), classes=np.asarray(model.classes_),
        kind=type(model).__name__)


# ---------------------------------------------------------------------- LightGBM
def _lgb_split(node: dict) -> tuple[float, bool]:
    """The split's threshold and where a NaN goes."""
    if node.get("decision_type") != "<=":
        raise ValueError("LightGBM model with categorical splits: the reader reads "
                         "numeric splits only.")
    missing = node.get("missing_type", "None")
    if missing == "Zero":
        raise ValueError("LightGBM model with missing_type='Zero' (zero_as_missing=True): "
                         "the reader reads missing_type 'None' and 'NaN' only.")
    threshold = float(node["threshold"])
    if missing == "NaN":
        return threshold, bool(node["default_left"])
    return threshold, 0.0 <= threshold  # a NaN is read as 0


def _lgb_walk(node: dict, nodes: _Nodes) -> int:
    at = nodes.add()
    if "leaf_value" in node:
        if node.get("leaf_features"):
            raise ValueError("LightGBM model with linear_tree=True: its leaves are linear "
                             "models of the features; the reader reads constant leaves only.")
        nodes.value[at] = float(node["leaf_value"])
        return at
    nodes.feature[at] = int(node["split_feature"])
    nodes.threshold[at], nodes.missing_left[at] = _lgb_split(node)
    nodes.left[at] = _lgb_walk(node["left_child"], nodes)
    nodes.right[at] = _lgb_walk(node["right_child"], nodes)
    return at


def read_lightgbm(model) -> TreeEnsemble:
    """Read a binary ``lightgbm.LGBMClassifier`` (numeric splits)."""
    dump = model.booster_.dump_model()
    _check_binary_booster(model, int(dump["num_class"]), dump["objective"])
    if dump.get("average_output"):
        raise ValueError("LightGBM model with average_output (boosting='rf'): the reader "
                         "reads boosted models only.")
    trees = []
    for info in dump["tree_info"]:
        nodes = _Nodes()
        _lgb_walk(info["tree_structure"], nodes)
        trees.append(nodes.tree())
    sigmoid = float(dump["objective"].partition("sigmoid:")[2] or 1.0)
    threshold = least_positive(lambda raw: _lightgbm_positive(raw, sigmoid), np.float64)
    return TreeEnsemble(
        trees=tuple(trees), base_score=0.0, decision_threshold=threshold, strict=False,
        input_dtype=np.dtype(np.float64), score_dtype=np.dtype(np.float64),
        n_features=int(dump["max_feature_idx"]) + 1, classes=np.asarray(model.classes_),
        kind=type(model).__name__)
