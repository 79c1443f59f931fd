"""Private helpers shared by every box of skfairverify (not a public API).

* :mod:`._validation`: the sensitive features (a column name, a list of names or the
  values), sample weights, unambiguous categories;
* :mod:`._compat`: every private scikit-learn name the package uses, in one place;
* :mod:`._results`: the base of the small result objects every analysis returns.
"""
