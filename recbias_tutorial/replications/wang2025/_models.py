r"""The course's MF trainers for Wang et al.'s Table 1 (private; labelled as ours).

Re-exported by :mod:`recbias_tutorial.replications.wang2025`; import it from there.
:func:`course_trainers` holds the propensity set-up and the options of the three
:func:`recbias_tutorial.debiased_mf.fit_mf` trainers (MF, IPS-MF, DR-MF) that chapter 5 and
``make replicate`` both fit on Yahoo! R3. They are the course's trainers, not the paper's
implementations of MF, IPS and DR.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..._validation import check_choice, check_feedback, check_int
from ...debiased_mf import calibrate_propensity
from ...propensity import popularity_propensity


#: ``regularisation`` of :func:`course_trainers`: the course's IPS-MF penalty (ten times
#: MF's, ``reg=100``) or MF's own (``fit_mf``'s default), so that MF and IPS-MF differ only in
#: the weights.
REGULARISATION = ("course", "equal")


def course_trainers(train: pd.DataFrame, *, n_users: int, n_items: int,
                    regularisation: str = "course") -> dict[str, dict[str, Any]]:
    r"""The course's three MF trainers of Table 1, as options of ``fit_mf``.

    The propensities are Yang et al.'s popularity propensities with :math:`\gamma = 0`,
    :math:`P_i \propto n_i^{1/2}` from the training counts
    (:func:`recbias_tutorial.propensity.popularity_propensity`), made absolute by
    :func:`recbias_tutorial.debiased_mf.calibrate_propensity` (their sum over all pairs is the
    size of the log); ``fit_mf`` clips them below at 0.05. The trainers:

    * ``"MF"``: the naive objective (every pair that is not a logged positive is a negative);
    * ``"IPS-MF"``: logged positives weighted by :math:`1/P_i`, ``reg=100`` (with
      ``regularisation="equal"``: MF's ``reg``, so only the weights differ from MF);
    * ``"DR-MF"``: doubly robust joint learning with the same propensities.

    Everything else (factors, epochs, learning rate, ...) is ``fit_mf``'s default unless the
    caller passes it; the seed, the epochs and the threshold are the caller's.

    Parameters
    ----------
    train : pandas.DataFrame
        The training log (``user``, ``item``, ``rating``); its item counts give the
        propensities.
    n_users, n_items : int
        Size of the id spaces (the score matrix).
    regularisation : {"course", "equal"}, default "course"
        IPS-MF's penalty: the course's ``reg=100`` or MF's (see :data:`REGULARISATION`).

    Returns
    -------
    dict
        ``{"MF": {}, "IPS-MF": {...}, "DR-MF": {...}}``: name -> keyword options of
        :func:`recbias_tutorial.debiased_mf.fit_mf` (``method``, ``propensity``, ``reg``).

    Raises
    ------
    ValueError
        If ``n_users`` or ``n_items`` is not a positive int, ``regularisation`` is unknown, or
        ``train`` is not a non-empty
        feedback frame inside those id spaces.

    See Also
    --------
    recbias_tutorial.debiased_mf.fit_mf : fits one trainer.
    scheme_users : both schemes of the fitted scores.

    Examples
    --------
    >>> train = pd.DataFrame({"user": [0, 0, 1], "item": [0, 1, 0], "rating": [5.0, 4.0, 5.0]})
    >>> specs = course_trainers(train, n_users=2, n_items=3)
    >>> {name: spec.get("method", "naive") for name, spec in specs.items()}
    {'MF': 'naive', 'IPS-MF': 'ips', 'DR-MF': 'dr'}
    >>> specs["IPS-MF"]["propensity"].round(3).tolist()  # sums to len(train) / n_users
    [0.621, 0.439, 0.439]
    >>> "reg" in course_trainers(train, n_users=2, n_items=3, regularisation="equal")["IPS-MF"]
    False
    """
    n_users = check_int(n_users, "n_users")
    n_items = check_int(n_items, "n_items")
    regularisation = check_choice(regularisation, "regularisation", REGULARISATION)
    check_feedback(train, "train", n_users, n_items)
    pop = calibrate_propensity(popularity_propensity(train, n_items, gamma=0.0),
                               n_observed=len(train), n_users=n_users)
    ips = {"method": "ips", "propensity": pop, **({"reg": 100} if regularisation == "course" else {})}
    return {"MF": {}, "IPS-MF": ips,
            "DR-MF": {"method": "dr", "propensity": pop}}
