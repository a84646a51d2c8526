"""The compiled copy of Cornac 3.0.1's ``pmf.pyx`` training loop (see :mod:`._pmf`)."""

from __future__ import annotations

from .._jit import numba  # Numba, or the same code run as Python without it
import numpy as np

_EPS = 1e-8  # pmf.pyx: double eps = 1e-8
_MAX_EXP = 6.0  # pmf.pyx: sigmoid's cut-off (a C float)


# boundscheck off (Cython's default has it on): the indices come from Cornac's Dataset
@numba.njit(cache=True, boundscheck=False, fastmath=False, error_model="numpy")
def pmf_epochs(uid, iid, rat, U, V, n_epochs, lambda_reg, learning_rate, gamma,
               one_minus_gamma, non_linear):  # pragma: no cover (compiled)
    """Train ``U`` and ``V`` in place: ``pmf_linear`` / ``pmf_non_linear`` of ``pmf.pyx``."""
    k = U.shape[1]
    cache_u = np.zeros(U.shape)
    cache_v = np.zeros(V.shape)
    for _ in range(n_epochs):
        for r in range(rat.shape[0]):
            u_row, v_row = U[uid[r]], V[iid[r]]
            cu, cv = cache_u[uid[r]], cache_v[iid[r]]
            s = 0.0
            for j in range(k):  # a sequential sum, as in pmf.pyx
                s += u_row[j] * v_row[j]
            if non_linear:
                z = np.float32(s)  # sigmoid(float z): the argument is a C float
                if z > _MAX_EXP:
                    sg = 1.0
                elif z < -_MAX_EXP:
                    sg = 0.0
                else:  # exp in single precision (what Cornac's build computes: tested),
                    # the quotient in double, stored in a C float. The C library's expf has
                    # an FMA and a plain variant (glibc picks one per CPU); over every float32
                    # they differ at two inputs only, 32.564632 and -63.09946, both outside
                    # this branch's [-6, 6]: the fit has the same bits on every CPU
                    sg = np.float64(np.float32(1.0 / (1.0 + np.float64(np.exp(-z)))))
                err = (np.float64(rat[r]) - sg) * sg * (1.0 - sg)  # the weighted error
            else:
                err = np.float64(rat[r]) - s
            for j in range(k):
                g = err * v_row[j] - lambda_reg * u_row[j]
                c = gamma * cu[j] + one_minus_gamma * (g * g)
                cu[j] = c
                u_row[j] += learning_rate * (g / (np.sqrt(c) + _EPS))
            for j in range(k):  # with the user's row already updated, as in pmf.pyx
                g = err * u_row[j] - lambda_reg * v_row[j]
                c = gamma * cv[j] + one_minus_gamma * (g * g)
                cv[j] = c
                v_row[j] += learning_rate * (g / (np.sqrt(c) + _EPS))
