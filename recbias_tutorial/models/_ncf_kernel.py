"""The compiled loops of the NumPy NCF trainer (see :mod:`._ncf_train`).

One call of :func:`train_epoch` runs the mini-batches of one epoch of Cornac's
``NCFBase._fit_tf`` on float32 arrays: the forward pass of GMF / MLP / NeuMF for every
(user, item) pair of a batch, the gradient of the mean sigmoid cross-entropy on the logits,
and Keras 3's Adam step on every variable. Loops only (no BLAS), and ``exp``, ``tanh``,
``expm1`` and integer powers from :mod:`recbias_tutorial._portable_math` instead of the C
library's: the order of every sum and every rounding is fixed here, so a fit gives the same
bits on every x86-64 CPU (``tests/test_portable.py`` trains under other CPUs' settings).

**Embedding tables.** A user row holds the GMF embedding then the MLP one (``D = kg + h``
columns; the two are separate Keras variables with the same Adam step, so one table is exact).
Keras's Adam is *dense* on them (the L2 regulariser adds a dense zero gradient, and Keras 3's
``update_step`` densifies a sparse one anyway): a row absent from a batch still has its
moments decayed and its weight moved by ``alpha_t m_t / (sqrt(v_t) + eps)``. With ``reg = 0``
its gradient is exactly zero, so after its last update at step ``t0`` (moments ``m0``, ``v0``,
``s0 = sqrt(v0)``) the next ``d`` steps give ``m = b1^d m0``, ``v = b2^d v0`` and

    w -= m0 * sum_{j=1..d} alpha_{t0+j} b1^j / (b2^(j/2) s0 + eps)

(``b1``, ``b2`` the float32 factors ``1 - (1 - beta)`` of Keras's update). The sum is evaluated
exactly, ``eps`` included: with ``y = s0 / (s0 + eps)`` and ``delta_j = 1 - b2^(j/2)``,
``1 / (b2^(j/2) s0 + eps) = (1 / (s0 + eps)) sum_n (delta_j y)^n``, a series whose terms
shrink faster than ``(0.005 n)^n``: ``N_SERIES + 1`` coefficients
``C_n = sum_j alpha_{t0+j} b1^j delta_j^n`` per row (not per element) give it to float64
rounding; terms beyond ``j = J_MAX`` (``b1^400 ~ 5e-19``) vanish at float64 precision. So a
row is brought up to date (:func:`_catch_up`) only when a batch reads it, and once at the end;
with ``reg > 0`` every row has a gradient at every step and the kernel updates every row.
"""

from __future__ import annotations

from .._jit import numba  # Numba, or the same code run as Python without it
import numpy as np

from .._portable_math import expf, expm1f, powi, tanhf

#: Activation codes (Cornac's ``act_functions`` names, in :data:`ACT_CODES` order).
ACT_CODES = ("sigmoid", "tanh", "elu", "selu", "relu", "relu6", "leaky_relu")
_SIGMOID, _TANH, _ELU, _SELU, _RELU, _RELU6, _LEAKY = range(7)
_SELU_ALPHA = np.float32(1.6732632423543772)
_SELU_SCALE = np.float32(1.0507009873554805)
_LEAKY_ALPHA = np.float32(0.2)  # tf.nn.leaky_relu's default slope
#: Terms of the series in ``delta_j y`` and of the sum over the skipped steps.
N_SERIES = 10
J_MAX = 400

_JIT = dict(cache=True, boundscheck=False, fastmath=False, error_model="numpy", nogil=True)


@numba.njit(**_JIT)
def _act_rows(P, A, rows, N, code):  # pragma: no cover (compiled)
    """``A[r, :N] = act(P[r, :N])`` for ``r`` in ``rows`` (TensorFlow's float32 activations)."""
    zero, one = np.float32(0.0), np.float32(1.0)
    for r in range(rows[0], rows[1]):
        p, a = P[r], A[r]
        if code == _RELU:
            for n in range(N):
                a[n] = p[n] if p[n] > zero else zero
        elif code == _SIGMOID:
            for n in range(N):
                a[n] = one / (one + expf(-p[n]))
        elif code == _TANH:
            for n in range(N):
                a[n] = tanhf(p[n])
        elif code == _ELU:
            for n in range(N):
                a[n] = p[n] if p[n] > zero else expm1f(p[n])
        elif code == _SELU:
            for n in range(N):
                a[n] = (_SELU_SCALE * p[n] if p[n] > zero
                        else _SELU_SCALE * (_SELU_ALPHA * expm1f(p[n])))
        elif code == _RELU6:
            for n in range(N):
                a[n] = min(max(p[n], zero), np.float32(6.0))
        else:  # leaky ReLU
            for n in range(N):
                a[n] = p[n] if p[n] > zero else _LEAKY_ALPHA * p[n]


@numba.njit(**_JIT)
def _act_grad_rows(D, P, A, r0, n_rows, N, code):  # pragma: no cover (compiled)
    """``D[o] *= act'`` for ``o < n_rows`` (pre-activations ``P[r0 + o]``, outputs ``A[r0 + o]``):
    TensorFlow's ReluGrad, SigmoidGrad, TanhGrad, EluGrad, SeluGrad, Relu6Grad, LeakyReluGrad."""
    zero, one = np.float32(0.0), np.float32(1.0)
    for o in range(n_rows):
        d, p, a = D[o], P[r0 + o], A[r0 + o]
        if code == _RELU:
            for n in range(N):
                d[n] = d[n] if a[n] > zero else zero
        elif code == _SIGMOID:
            for n in range(N):
                d[n] = d[n] * (a[n] * (one - a[n]))
        elif code == _TANH:
            for n in range(N):
                d[n] = d[n] * (one - a[n] * a[n])
        elif code == _ELU:
            for n in range(N):
                d[n] = d[n] if a[n] > zero else d[n] * (a[n] + one)
        elif code == _SELU:
            for n in range(N):
                d[n] = (d[n] * _SELU_SCALE if a[n] > zero
                        else d[n] * (a[n] + _SELU_SCALE * _SELU_ALPHA))
        elif code == _RELU6:
            for n in range(N):
                d[n] = d[n] if (p[n] > zero and p[n] < np.float32(6.0)) else zero
        else:
            for n in range(N):
                d[n] = d[n] if p[n] > zero else d[n] * _LEAKY_ALPHA


@numba.njit(**_JIT)
def _catch_up(E, M, V, last, r, target, alpha64, pw, b1, b2, eps, coef):  # pragma: no cover
    """Bring row ``r`` from its last update to the end of step ``target`` (zero gradients);
    ``coef``: a buffer of ``pw.shape[1]`` float64."""
    t0 = last[r]
    d = target - t0
    if d <= 0:
        return
    n_coef = pw.shape[1]
    for n in range(n_coef):
        coef[n] = 0.0
    for j in range(1, min(d, pw.shape[0] - 1) + 1):
        a = alpha64[t0 + j]
        row = pw[j]
        for n in range(n_coef):
            coef[n] += a * row[n]
    decay_m, decay_v = powi(b1, d), powi(b2, d)
    e, mm, vv = E[r], M[r], V[r]
    for c in range(E.shape[1]):
        m0 = np.float64(mm[c])
        v0 = np.float64(vv[c])
        if m0 != 0.0:
            s = np.sqrt(v0)
            den = s + eps
            y = s / den
            acc = coef[n_coef - 1]
            for n in range(n_coef - 2, -1, -1):
                acc = acc * y + coef[n]
            e[c] = np.float32(np.float64(e[c]) - m0 * (acc / den))
        mm[c] = np.float32(m0 * decay_m)
        vv[c] = np.float32(v0 * decay_v)
    last[r] = target


@numba.njit(**_JIT)
def catch_up_all(E, M, V, last, target, alpha64, pw, b1, b2, eps):  # pragma: no cover
    """Every row of one table brought to the end of step ``target``."""
    coef = np.empty(pw.shape[1])
    for r in range(E.shape[0]):
        _catch_up(E, M, V, last, r, target, alpha64, pw, b1, b2, eps, coef)


@numba.njit(**_JIT)
def _adam_row(E, M, V, G, r, slot, a, c1, c2, eps, reg):  # pragma: no cover (compiled)
    """Keras 3's ``Adam.update_step`` on one row, float32, in its order of operations; the
    row's gradient buffer is zeroed."""
    e, m, v, g = E[r], M[r], V[r], G[slot]
    zero, two = np.float32(0.0), np.float32(2.0)
    if reg != zero:
        for c in range(e.shape[0]):
            g[c] = g[c] + reg * (e[c] * two)  # d(reg * sum(w^2)) / dw
    for c in range(e.shape[0]):
        mc = m[c] + (g[c] - m[c]) * c1
        vc = v[c] + (g[c] * g[c] - v[c]) * c2
        m[c] = mc
        v[c] = vc
        e[c] = e[c] - (mc * a) / (np.sqrt(vc) + eps)
        g[c] = zero


@numba.njit(**_JIT)
def train_epoch(pos_u, pos_i, neg_i, batch_size, num_neg, step,
                EU, MU, VU, last_u, EI, MI, VI, last_i,
                theta, m_theta, v_theta, reg_theta, layout, kg, h, act,
                alpha32, alpha64, pw, consts, lazy):  # pragma: no cover (compiled)
    """One epoch of mini-batches; returns the number of optimiser steps taken so far.

    ``pos_u``, ``pos_i``: the epoch's positive pairs in shuffled order; ``neg_i``: their
    ``num_neg`` negatives each, in the same order (Cornac's ``uir_iter``). ``step``: steps
    before this epoch. ``EU``/``EI`` (+ Adam moments ``M*``, ``V*`` and ``last_*``, the step
    each row is up to date with): the embedding tables. ``theta`` (+ moments): the dense
    parameters, laid out as ``layout`` says (``[L, sizes[0..L], offsets of W_l, of b_l, of
    the output kernel]``, kernels ``(n_in, n_out)`` row-major as Keras holds them);
    ``reg_theta`` their L2 factors. ``alpha32[t]``: Adam's float32 step size at step ``t``;
    ``alpha64`` the same in float64 and ``pw[j, n] = b1^j delta_j^n`` for the catch-up;
    ``consts``: ``[c1, c2, eps, reg, b1, b2]`` (the float32 ``1 - beta_1``, ``1 - beta_2``,
    epsilon and L2 factor of the embeddings, then the float64 decay factors). ``lazy``:
    defer the untouched rows (``reg`` must be 0), else update every row every step.

    The MLP's activations are held feature-major (``(units, pairs)``) so that every product
    is a long loop over the pairs without a reduction (vectorised without reordering a sum).
    """
    c1, c2, eps, reg = (np.float32(consts[0]), np.float32(consts[1]), np.float32(consts[2]),
                        np.float32(consts[3]))
    b1, b2, eps64 = consts[4], consts[5], np.float64(np.float32(consts[2]))
    zero = np.float32(0.0)
    n_layers = layout[0]
    sizes = layout[1:n_layers + 2]
    off_w = layout[n_layers + 2:2 * n_layers + 2]
    off_b = layout[2 * n_layers + 2:3 * n_layers + 2]
    off_out = layout[3 * n_layers + 2]
    width = (sizes[n_layers] if n_layers > 0 else 2 * h) if h > 0 else 0
    d_out = kg + width
    unit_off = np.zeros(n_layers + 1, np.int64)
    for layer in range(n_layers):
        unit_off[layer + 1] = unit_off[layer] + sizes[layer + 1]
    n_units = unit_off[n_layers]
    max_width = 2 * h
    for layer in range(n_layers):
        max_width = max(max_width, sizes[layer + 1])
    n_users, n_items, n_cols = EU.shape[0], EI.shape[0], EU.shape[1]
    n_max = batch_size * (1 + num_neg)
    b_u = np.empty(n_max, np.int64)
    b_i = np.empty(n_max, np.int64)
    b_y = np.empty(n_max, np.float32)
    s_u = np.empty(n_max, np.int64)
    s_i = np.empty(n_max, np.int64)
    z = np.empty(n_max, np.float32)
    gz = np.empty(n_max, np.float32)
    G = np.empty((n_max, max(kg, 1)), np.float32)  # GMF products, pair-major
    X0T = np.empty((max(2 * h, 1), n_max), np.float32)  # MLP input, feature-major
    X0 = np.empty((n_max, max(2 * h, 1)), np.float32)  # and pair-major
    PT = np.empty((max(n_units, 1), n_max), np.float32)  # pre-activations, feature-major
    AT = np.empty((max(n_units, 1), n_max), np.float32)  # activations, feature-major
    A = np.empty((n_max, max(n_units, 1)), np.float32)  # activations, pair-major
    DA = np.empty((max(max_width, 1), n_max), np.float32)  # gradient of a layer's output
    DX = np.empty((max(max_width, 1), n_max), np.float32)  # gradient of its input
    GWT = np.zeros(max(theta.shape[0], 1), np.float32)  # dense kernels' gradients, (out, in)
    g_theta = np.zeros(theta.shape[0], np.float32)
    coef = np.empty(pw.shape[1])
    rows_u = np.arange(n_users) if not lazy else np.empty(min(n_users, n_max), np.int64)
    rows_i = np.arange(n_items) if not lazy else np.empty(min(n_items, n_max), np.int64)
    slot_u = np.full(n_users, -1, np.int64)
    slot_i = np.full(n_items, -1, np.int64)
    GU = np.zeros((rows_u.shape[0], n_cols), np.float32)
    GI = np.zeros((rows_i.shape[0], n_cols), np.float32)
    n_pos = pos_u.shape[0]
    for start in range(0, n_pos, batch_size):
        step += 1
        stop = min(start + batch_size, n_pos)
        n_b = stop - start
        N = n_b * (1 + num_neg)
        for k in range(n_b):  # the positives, then their negatives (uir_iter's order)
            b_u[k], b_i[k], b_y[k] = pos_u[start + k], pos_i[start + k], np.float32(1.0)
        for k in range(n_b * num_neg):
            b_u[n_b + k] = pos_u[start + k // num_neg]
            b_i[n_b + k] = neg_i[start * num_neg + k]
            b_y[n_b + k] = zero
        n_ru, n_ri = n_users, n_items
        if lazy:  # the rows this batch reads, brought up to date with the previous step
            n_ru = 0
            n_ri = 0
            for n in range(N):
                u, i = b_u[n], b_i[n]
                if slot_u[u] < 0:
                    slot_u[u] = n_ru
                    rows_u[n_ru] = u
                    n_ru += 1
                if slot_i[i] < 0:
                    slot_i[i] = n_ri
                    rows_i[n_ri] = i
                    n_ri += 1
                s_u[n], s_i[n] = slot_u[u], slot_i[i]
            for k in range(n_ru):
                _catch_up(EU, MU, VU, last_u, rows_u[k], step - 1, alpha64, pw, b1, b2, eps64,
                          coef)
            for k in range(n_ri):
                _catch_up(EI, MI, VI, last_i, rows_i[k], step - 1, alpha64, pw, b1, b2, eps64,
                          coef)
        else:
            for n in range(N):
                s_u[n], s_i[n] = b_u[n], b_i[n]
        # forward. GMF: the products u * i and their part of the logit
        for n in range(N):
            eu, ei, g = EU[b_u[n]], EI[b_i[n]], G[n]
            zg = zero
            for f in range(kg):
                g[f] = eu[f] * ei[f]
            for f in range(kg):
                zg += g[f] * theta[off_out + f]
            z[n] = zg
        if h > 0:  # MLP: [u, i] through the dense layers, feature-major
            for n in range(N):
                eu, ei, x = EU[b_u[n]], EI[b_i[n]], X0[n]
                for k in range(h):
                    x[k] = eu[kg + k]
                    x[h + k] = ei[kg + k]
                for k in range(2 * h):
                    X0T[k, n] = x[k]
            for layer in range(n_layers):
                n_in, n_o, u0 = sizes[layer], sizes[layer + 1], unit_off[layer]
                for o in range(n_o):
                    p = PT[u0 + o]
                    for n in range(N):
                        p[n] = zero
                    for k in range(n_in):
                        w = theta[off_w[layer] + k * n_o + o]
                        x = X0T[k] if layer == 0 else AT[unit_off[layer - 1] + k]
                        for n in range(N):
                            p[n] += w * x[n]
                    b = theta[off_b[layer] + o]
                    for n in range(N):
                        p[n] = p[n] + b
                _act_rows(PT, AT, (u0, u0 + n_o), N, act)
                for o in range(n_o):
                    a = AT[u0 + o]
                    for n in range(N):
                        A[n, u0 + o] = a[n]
            for o in range(width):
                w = theta[off_out + kg + o]
                x = AT[unit_off[n_layers - 1] + o] if n_layers > 0 else X0T[o]
                for n in range(N):
                    z[n] += w * x[n]
        bias = theta[off_out + d_out]
        # the gradient of mean(sigmoid_cross_entropy_with_logits) with respect to each logit
        up = np.float32(1.0) / np.float32(N)
        for n in range(N):
            zn = z[n] + bias
            if zn >= zero:
                e = expf(-zn)
                gz[n] = up * (np.float32(1.0) - b_y[n]) - (up / (np.float32(1.0) + e)) * e
            else:
                e = expf(zn)
                gz[n] = up * (zero - b_y[n]) + (up / (np.float32(1.0) + e)) * e
        # backward. The output layer and GMF
        for n in range(N):
            g_theta[off_out + d_out] += gz[n]
        for n in range(N):
            gzn, g, gu, gi = gz[n], G[n], GU[s_u[n]], GI[s_i[n]]
            eu, ei = EU[b_u[n]], EI[b_i[n]]
            for f in range(kg):
                g_theta[off_out + f] += gzn * g[f]
            for f in range(kg):
                dg = gzn * theta[off_out + f]
                gu[f] += dg * ei[f]
                gi[f] += dg * eu[f]
        if h > 0:  # the MLP, feature-major: DA holds the gradient of the current output
            for o in range(width):
                w = theta[off_out + kg + o]
                x = AT[unit_off[n_layers - 1] + o] if n_layers > 0 else X0T[o]
                d = DA[o]
                s = zero
                for n in range(N):
                    s += gz[n] * x[n]
                    d[n] = gz[n] * w
                g_theta[off_out + kg + o] += s
            for layer in range(n_layers - 1, -1, -1):
                n_in, n_o, u0 = sizes[layer], sizes[layer + 1], unit_off[layer]
                _act_grad_rows(DA, PT, AT, u0, n_o, N, act)  # DA: now d(pre-activation)
                for o in range(n_o):
                    d = DA[o]
                    s = zero
                    for n in range(N):
                        s += d[n]
                    g_theta[off_b[layer] + o] += s
                gw = GWT[off_w[layer]:off_w[layer] + n_in * n_o]  # (n_o, n_in), zeroed
                for n in range(N):  # d kernel: sum over pairs of outer products
                    x = X0[n] if layer == 0 else A[n, unit_off[layer - 1]:unit_off[layer]]
                    for o in range(n_o):
                        dn = DA[o, n]
                        row = o * n_in
                        for k in range(n_in):
                            gw[row + k] += dn * x[k]
                for o in range(n_o):
                    row = o * n_in
                    for k in range(n_in):
                        g_theta[off_w[layer] + k * n_o + o] += gw[row + k]
                        gw[row + k] = zero
                for k in range(n_in):  # d input = W d(pre-activation)
                    dx = DX[k]
                    for n in range(N):
                        dx[n] = zero
                    for o in range(n_o):
                        w = theta[off_w[layer] + k * n_o + o]
                        d = DA[o]
                        for n in range(N):
                            dx[n] += w * d[n]
                for k in range(n_in):
                    da, dx = DA[k], DX[k]
                    for n in range(N):
                        da[n] = dx[n]
            for n in range(N):  # DA: the gradient of [u, i]
                gu, gi = GU[s_u[n]], GI[s_i[n]]
                for k in range(h):
                    gu[kg + k] += DA[k, n]
                    gi[kg + k] += DA[h + k, n]
        # Adam (Keras 3): the dense parameters, then every row with a gradient
        a = alpha32[step]
        for p in range(theta.shape[0]):
            g = g_theta[p]
            if reg_theta[p] != zero:
                g = g + reg_theta[p] * (theta[p] * np.float32(2.0))
            m = m_theta[p] + (g - m_theta[p]) * c1
            v = v_theta[p] + (g * g - v_theta[p]) * c2
            m_theta[p] = m
            v_theta[p] = v
            theta[p] = theta[p] - (m * a) / (np.sqrt(v) + eps)
            g_theta[p] = zero
        for k in range(n_ru):
            r = rows_u[k]
            _adam_row(EU, MU, VU, GU, r, k, a, c1, c2, eps, reg)
            last_u[r] = step
            slot_u[r] = -1
        for k in range(n_ri):
            r = rows_i[k]
            _adam_row(EI, MI, VI, GI, r, k, a, c1, c2, eps, reg)
            last_i[r] = step
            slot_i[r] = -1
    return step


@numba.njit(**_JIT)
def draw_negatives(users, draws, out, filled, indptr, indices):  # pragma: no cover
    """Cornac's rejection loop of ``uir_iter`` over a block of ``randint`` draws: slot
    ``filled`` takes the next draw unless ``(users[slot], draw)`` is a positive pair
    (``indices[indptr[u]:indptr[u+1]]``, sorted). Returns the number of slots filled; the
    caller draws as many more as slots are left, so no draw is wasted or added."""
    for k in range(draws.shape[0]):
        u, j = users[filled], draws[k]
        lo, hi = indptr[u], indptr[u + 1]
        while lo < hi:  # binary search of j among u's positives
            mid = (lo + hi) // 2
            if indices[mid] < j:
                lo = mid + 1
            else:
                hi = mid
        if lo < indptr[u + 1] and indices[lo] == j:
            continue  # a positive: Cornac draws again for the same slot
        out[filled] = j
        filled += 1
    return filled
