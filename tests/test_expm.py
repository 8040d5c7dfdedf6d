"""The matrix exponential of csrc/linalg/expm.c through ``_core.expm``, judged against
exp(A) computed exactly, on random matrices (sizes 1..50, 1-norms 1e-3..1e3) and on
the LLM's Van Loan block matrices h [[J, f_t, f], [0, 0, 1], [0, 0, 0]].

Reference.  exp(A) in fixed point with 128 fractional bits (integers only: Taylor
series of 2^-k A, ||2^-k A||_1 <= 1/16, summed until the terms are below 2^-127, then k
exact squarings), rounded once to double at the end; more fractional bits when exp(A)
is small (extra_bits).  Truncation errors of 2^-128 are amplified by at most 2^25 by
the squarings on these matrices (measured for all of them against 192 bits; asserted
on the hardest in test_reference_precision), so the reference is exact to far below
double rounding.  The integer matrix products are done in 16-bit limbs with float64
matrix products whose every partial sum is an integer below 2^53, hence exact under any
BLAS; test_reference_integer_arithmetic checks them bit for bit against plain Python
integers.

Bound.  mbint's result E must satisfy, for every matrix,

    ||E - exp(A)||_1 / ||exp(A)||_1 <= u (C_N n + C_A max(1, ||A||_1)),  u = 2^-53,
    C_N = 2, C_A = 8.

The first term covers the rounding in evaluating the Pade approximant (a fixed number
of n x n products and one LU solve: errors of the gamma_n kind, linear in n).  The
second is the conditioning of exp itself: its relative condition number is at least
||A|| (equal for normal A), so no double-precision algorithm can promise better than
about u ||A|| (Higham, Functions of Matrices, 2008, sections 10.2-10.3).  On the 764
matrices below mbint stays within 0.45 of this bound with the reference BLAS, 0.53
with OpenBLAS 0.3.21 and 0.44 with ATLAS (worst: an LLM block, n = 4, ||A|| = 13,
relative condition number 23, error 49 u with the reference BLAS); SciPy's
expm (1.17.1 with its OpenBLAS) exceeds it on 11 of them, by up to 44x, which is why
agreement with SciPy's last bits is no criterion here."""
import numpy as np
import pytest

from mbint import _core

U = 2.0 ** -53
C_N, C_A = 2, 8
NORMS = (1e-3, 1e-2, 0.1, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3)


def norm1(M):
    return np.abs(M).sum(axis=0).max() if M.size else 0.0


def reldiff(E, R):
    nr = norm1(R)
    return norm1(E - R) / nr if nr > 0 else norm1(E)


def bound(A):
    return U * (C_N * A.shape[0] + C_A * max(1.0, norm1(A)))


# ---------------------------------------------------------------- exact reference
# Fixed-point integer matrices in two representations with the same arithmetic:
# object arrays of Python integers (simple, slow: n^3 big-integer operations per
# product) and int64 "limb" arrays D of shape (L, n, n) with value sum_i D[i] 2^(16 i),
# limbs 0..L-2 in [0, 2^16) and the top limb in [-2^15, 2^15) (fast: the products are
# float64 BLAS products of limbs).

W = 16
BASE = 1 << W


def _normalize(D, trim=True):
    """Carry the limbs into the normal form, adding a top limb when needed and, with
    trim, dropping top limbs that are not needed."""
    D = D.copy()
    while True:
        c = D[:-1] >> W
        if not c.any():
            break
        D[:-1] -= c << W
        D[1:] += c
    while np.any((D[-1] < -BASE // 2) | (D[-1] >= BASE // 2)):
        c = D[-1] >> W
        D = np.concatenate([D[:-1], [D[-1] - (c << W)], [c]])
    while trim and len(D) > 1:
        v = D[-1] * BASE + D[-2]
        if np.any((v < -BASE // 2) | (v >= BASE // 2)):
            break
        D = np.concatenate([D[:-2], [v]])
    return D


def _limb_mul(X, Y, drop):
    """floor(X Y / 2^(16 drop)), exactly.  A limb product is below 2^32 in magnitude, a
    matrix product of limbs sums n <= 64 of them and an output limb sums at most
    min(Lx, Ly) <= 64 such products: every partial sum is an integer below 2^50, so the
    float64 products are exact whatever the BLAS's order of summation, blocking or FMA."""
    Lx, n, _ = X.shape
    Ly = Y.shape[0]
    assert n <= 64 and min(Lx, Ly) <= 64
    # all Lx Ly products of n x n limb matrices in one batched call (small products:
    # OpenBLAS runs each on one thread, no thread start-up per call)
    M = np.matmul(X[:, None].astype(float), Y[None, :].astype(float))
    D = np.zeros((Lx + Ly, n, n))
    for a in range(Lx):
        D[a:a + Ly] += M[a]
    D = _normalize(D.astype(np.int64), trim=False)
    if drop < len(D):            # the lower limbs are >= 0: dropping them is floor division
        return _normalize(D[drop:])
    return np.where(D[-1:] < 0, -1, 0)


def _limb_add(X, Y):
    L = max(len(X), len(Y))
    pad = lambda Z: np.concatenate([Z, np.zeros((L - len(Z),) + Z.shape[1:], Z.dtype)])
    return _normalize(pad(X) + pad(Y))


def _limb_div(X, j):
    """floor(X / j) for an integer j > 0: long division from the top limb down."""
    Q = np.empty_like(X)
    r = np.zeros(X.shape[1:], np.int64)
    for i in range(len(X) - 1, -1, -1):
        cur = r * BASE + X[i]
        Q[i] = cur // j
        r = cur - Q[i] * j
    return _normalize(Q)


def _to_limbs(M):
    n = M.shape[0]
    L = max([2] + [int(v).bit_length() // W + 2 for v in M.flat])
    D = np.empty((L, n, n), np.int64)
    for i in range(n):
        for j in range(n):
            D[:, i, j] = np.frombuffer(int(M[i, j]).to_bytes(2 * L, "little", signed=True), "<u2")
    D[-1] = D[-1].astype(np.uint16).view(np.int16)
    return D


def _from_limbs(D):
    U16 = np.ascontiguousarray(D.astype(np.uint16).transpose(1, 2, 0))
    n = D.shape[1]
    return np.array([[int.from_bytes(U16[i, j].tobytes(), "little", signed=True)
                      for j in range(n)] for i in range(n)], dtype=object).reshape(n, n)


def exp_reference_int(A, bits=128, limbs=True):
    """exp(A) as an integer matrix T, exp(A) = T / 2^bits to ~2^-bits (before the
    amplification by the squarings); with limbs=False in plain Python integers."""
    assert bits % W == 0
    A = np.asarray(A, dtype=float)
    n = A.shape[0]
    nrm = norm1(A)
    k = max(0, int(np.ceil(np.log2(nrm))) + 4) if nrm > 0 else 0    # ||2^-k A|| <= 1/16
    one = 1 << bits
    X = np.array([[int(np.ldexp(a, bits - k)) for a in row] for row in A],
                 dtype=object).reshape(n, n)
    I = np.array([[one if i == j else 0 for j in range(n)] for i in range(n)],
                 dtype=object).reshape(n, n)
    if limbs:
        mul = lambda P, Q: _limb_mul(P, Q, bits // W)
        add, div, X, I = _limb_add, _limb_div, _to_limbs(X), _to_limbs(I)
        tiny = lambda P: len(P) == 1 and np.abs(P).max() <= 1     # trimmed: one limb
    else:
        mul = lambda P, Q: P @ Q >> bits
        add, div = (lambda P, Q: P + Q), (lambda P, j: P // j)
        tiny = lambda P: max(abs(v) for v in P.flat) <= 1
    # the terms are floored, so they end at -1 or 0 (units of 2^-bits): stop there
    T, term = I, I
    for j in range(1, 100):
        term = div(mul(term, X), j)
        T = add(T, term)
        if n == 0 or tiny(term):
            break
    assert j < 99
    for _ in range(k):
        T = mul(T, T)
    return _from_limbs(T) if limbs else T


def extra_bits(A):
    """Fixed point is absolute precision: when every eigenvalue has real part <= alpha < 0,
    ||exp(A)|| >= e^alpha may be small, and -alpha log2(e) more fractional bits keep
    2^-bits relative to ||exp(A)||."""
    alpha = np.linalg.eigvals(A).real.max() if A.size else 0.0
    return W * int(np.ceil(max(0.0, -alpha) * np.log2(np.e) / W))


def exp_reference(A, bits=128):
    """exp(A) rounded to double, with `bits` significant fractional bits."""
    A = np.asarray(A, dtype=float)
    extra = extra_bits(A)
    T = exp_reference_int(A, bits + extra)
    # ||exp(A)|| >= rho(exp(A)) = e^alpha >= 2^-extra, so the result has at least
    # bits - 1 significant bits (-1 for alpha's own rounding)
    assert A.size == 0 or max(sum(abs(v) for v in col) for col in T.T) >= 1 << (bits - 1)
    one = 1 << (bits + extra)
    return np.array([[v / one for v in row] for row in T], dtype=float).reshape(T.shape)


def random_matrix(rng, n, nrm, max_real=50.0):
    """Gaussian n x n matrix scaled to 1-norm nrm, shifted left when an eigenvalue has
    real part above max_real (so that exp(A) stays far from overflow)."""
    A = rng.standard_normal((n, n))
    A *= nrm / norm1(A)
    lam = np.linalg.eigvals(A).real.max()
    if lam > max_real:
        A -= (lam - max_real) * np.eye(n)
    return A


def llm_block(J, f_t, f, h):
    m = J.shape[0]
    C = np.zeros((m + 2, m + 2))
    C[:m, :m] = J
    C[:m, m] = f_t
    C[:m, m + 1] = f
    C[m, m + 1] = 1.0
    return h * C


def check_exact(A, record):
    """mbint's exp(A) against the exact reference, within the bound of the docstring."""
    E = _core.expm(A)
    err, b = reldiff(E, exp_reference(A)), bound(A)
    record.append(err / b)
    assert err <= b, (f"n = {A.shape[0]}, ||A||_1 = {norm1(A):.3e}: relative error "
                      f"{err:.2e} = {err / U:.1f} u > bound {b:.2e}")


# ---------------------------------------------------------------- the reference itself

def test_reference_is_exact_on_known_exponentials():
    w = 30.0
    R = exp_reference(np.array([[0.0, -w], [w, 0.0]]))
    assert np.allclose(R, [[np.cos(w), -np.sin(w)], [np.sin(w), np.cos(w)]], rtol=0, atol=1e-16)
    J = np.diag([-2.0] * 4) + np.diag([1.0] * 3, 1)
    R = exp_reference(J)
    exact = np.exp(-2.0) * np.array([[1 / np.prod(range(1, j - i + 1)) if j >= i else 0
                                      for j in range(4)] for i in range(4)])
    assert reldiff(R, exact) < 1e-16
    # non-normal, ||A||_1 = 1002 (14 squarings): exp [[a, b], [0, c]] =
    # [[e^a, b (e^a - e^c) / (a - c)], [0, e^c]]
    a, b, c = -1.0, 1000.0, -2.0
    R = exp_reference(np.array([[a, b], [0.0, c]]))
    exact = np.array([[np.exp(a), b * (np.exp(a) - np.exp(c)) / (a - c)], [0.0, np.exp(c)]])
    assert reldiff(R, exact) < 4 * U and R[1, 0] == 0.0


def test_reference_integer_arithmetic():
    """The limb products, sums and divisions give bit for bit the integers of plain
    Python arithmetic (negative entries, exact zeros, many squarings)."""
    rng = np.random.default_rng(11)
    mats = [random_matrix(rng, n, nrm) for n, nrm in
            [(1, 0.3), (2, 1e3), (3, 1e-3), (5, 30.0), (8, 300.0), (12, 1.0)]]
    mats.append(llm_block(rng.standard_normal((4, 4)) * 100, rng.standard_normal(4) * 100,
                          rng.standard_normal(4) * 100, 0.1))
    for A in mats:
        fast = exp_reference_int(A, 128)
        slow = exp_reference_int(A, 128, limbs=False)
        assert fast.shape == slow.shape and all(p == q for p, q in zip(fast.flat, slow.flat))


def test_reference_precision():
    """128 and 192 fractional bits agree to 2^-90 relative on the largest norms of the
    tests below and on an exp(A) of norm e^-150: the 128-bit reference is exact to far
    below u = 2^-53 (over all the matrices of this file the largest difference is 2^-103)."""
    rng = np.random.default_rng(12)
    mats = [random_matrix(rng, n, 1e3) for n in (3, 20, 50)]
    J = rng.standard_normal((48, 48)) * 1000 / np.sqrt(48)
    lam = np.linalg.eigvals(J).real.max()
    J -= (lam - 20.0) * np.eye(48)
    mats.append(llm_block(J, rng.standard_normal(48) * 1000, rng.standard_normal(48) * 1000, 1.0))
    B = random_matrix(rng, 6, 30.0)
    mats.append(B - (np.linalg.eigvals(B).real.max() + 150.0) * np.eye(6))
    assert extra_bits(mats[-1]) >= 150 * np.log2(np.e)
    for A in mats:
        b = 128 + extra_bits(A)
        T1, T2 = exp_reference_int(A, b), exp_reference_int(A, b + 64)
        diff = np.array([[float(abs((p << 64) - q)) for p, q in zip(r1, r2)]
                         for r1, r2 in zip(T1, T2)])
        ref = np.array([[float(abs(q)) for q in r2] for r2 in T2])
        assert norm1(diff) <= 2.0 ** -90 * norm1(ref), (A.shape, norm1(diff) / norm1(ref))


# ---------------------------------------------------------------- mbint's expm

@pytest.mark.parametrize("sizes", [range(1, 11), range(11, 31), range(31, 51)],
                         ids=["n1-10", "n11-30", "n31-50"])
def test_random_matrices_exact(sizes):
    rng = np.random.default_rng(sizes.start)
    record = []
    for n in sizes:
        for nrm in NORMS:
            check_exact(random_matrix(rng, n, nrm), record)
    print(f"sizes {sizes.start}..{sizes.stop - 1}: {len(record)} matrices, error / bound: "
          f"median {np.median(record):.2f}, max {max(record):.2f}")


def test_small_norms_exact():
    """Below ||A|| = 10 the bound is u (2 n + 8 max(1, ||A||)): a few u for small n,
    at most 3e-14 at n = 49."""
    rng = np.random.default_rng(7)
    record = []
    for n in range(1, 51, 3):
        for nrm in (1e-3, 1e-2, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0):
            check_exact(random_matrix(rng, n, nrm), record)
    print(f"small norms: {len(record)} matrices, max error / bound {max(record):.2f}")


@pytest.mark.parametrize("m", [1, 2, 4, 8, 12, 20, 30, 48])
def test_llm_block_matrices_exact(m):
    """h [[J, f_t, f], [0, 0, 1], [0, 0, 0]] for a random J (eigenvalues with h Re lam <= 20),
    h ||J|| from 1e-3 to 1e3.  The zero blocks of exp stay exactly zero; the trailing
    block exp(h [[0, 1], [0, 0]]) = [[1, h], [0, 1]] is kept to the rounding of the Pade
    step, doubled by each of the s squarings: the ones within 2^(s+1) u, h within 2^(s+1)
    ulps.  (With the reference BLAS they come out exact; OpenBLAS's and ATLAS's
    triangular solves multiply by the reciprocal of the pivot, 1 ulp off, which the
    squarings make 2^s: 2048 u for s = 11.)"""
    rng = np.random.default_rng(100 + m)
    record = []
    for scale in (1.0, 10.0, 100.0, 1000.0):
        for h in (1e-3, 1e-2, 0.1, 1.0):
            J = rng.standard_normal((m, m)) * scale / np.sqrt(m)
            lam = np.linalg.eigvals(J).real.max()
            if lam * h > 20.0:
                J -= (lam - 20.0 / h) * np.eye(m)
            f_t = rng.standard_normal(m) * scale
            f = rng.standard_normal(m) * scale
            A = llm_block(J, f_t, f, h)
            check_exact(A, record)
            E, info = _core.expm(A, True)
            assert np.all(E[m:, :m] == 0.0) and E[m + 1, m] == 0.0
            ulps = 2.0 ** (info["s"] + 1)
            assert abs(E[m, m] - 1.0) <= ulps * U and abs(E[m + 1, m + 1] - 1.0) <= ulps * U
            assert abs(E[m, m + 1] - h) <= ulps * np.spacing(h)
    print(f"m = {m}: max error / bound {max(record):.2f}")


def test_squarings_grow_like_log2_norm():
    rng = np.random.default_rng(3)
    B = rng.standard_normal((6, 6))
    B = (B - B.T) / norm1(B - B.T)  # skew-symmetric, ||B||_1 = 1: exp stays orthogonal
    s = {}
    for k in range(-10, 15):
        E, info = _core.expm(np.ldexp(B, k), True)
        assert info["products"] == {3: 2, 5: 3, 7: 4, 9: 5, 13: 6}[info["m"]] + info["s"]
        s[k] = info["s"]
        assert norm1(E.T @ E - np.eye(6)) < 10 * 2.0**-53 * max(1.0, 2.0**k)
    assert s[-10] == 0
    offsets = [s[k] - k for k in range(4, 15)]
    assert max(offsets) - min(offsets) <= 1, s


def test_corner_cases():
    assert _core.expm(np.zeros((0, 0))).shape == (0, 0)
    assert _core.expm([[0.5]])[0, 0] == pytest.approx(np.exp(0.5), rel=2e-16)
    E, info = _core.expm(np.zeros((4, 4)), True)
    assert np.array_equal(E, np.eye(4)) and info == {"m": 0, "s": 0, "products": 0}
    A = np.arange(9.0).reshape(3, 3) / 10
    assert np.array_equal(_core.expm(A), _core.expm(np.asfortranarray(A)))
    assert np.allclose(_core.expm(A.T), _core.expm(A).T, rtol=1e-14, atol=0)
    with pytest.raises(ValueError):
        _core.expm(np.zeros((2, 3)))
    for bad in (np.nan, np.inf):
        A = np.eye(3)
        A[1, 2] = bad
        with pytest.raises(RuntimeError):
            _core.expm(A)
    with pytest.raises(RuntimeError):  # exp(800) overflows
        _core.expm(np.diag([800.0, 0.0]))
