"""The matrix exponential of csrc/linalg/expm.c through ``_core.expm``, against
``scipy.linalg.expm`` on random matrices (sizes 1..50, 1-norms 1e-3..1e3) and on the
LLM's Van Loan block matrices h [[J, f_t, f], [0, 0, 1], [0, 0, 0]].

The two agree to 1e-13 relative in the 1-norm except on a few matrices of large norm,
where the exponential itself is ill conditioned (its relative condition number is at
least ||A||, so no algorithm in double precision can promise better than about
u ||A||, u = 2^-53).  There the test computes exp(A) in 256-bit fixed point (Python
integers, Taylor series with scaling and squaring, exact to far below double
rounding) and requires mbint's error to stay within max(1e-13, 4 u ||A||_1).  On these
matrices mbint and SciPy differ mostly by one squaring: mbint applies Al-Mohy and
Higham's ell(2^-s A, 13) correction, which asks for one more here."""
import numpy as np
import pytest
import scipy.linalg

from mbint import _core

AGREE = 1e-13


def norm1(M):
    return np.abs(M).sum(axis=0).max() if M.size else 0.0


def reldiff(E, R):
    nr = norm1(R)
    return norm1(E - R) / nr if nr > 0 else norm1(E)


def exp_reference(A, bits=256):
    """exp(A) in fixed point with `bits` fractional bits: A / 2^k with ||A / 2^k|| <= 1/2,
    Taylor series to 2^-bits, k squarings, rounded once to double at the end."""
    A = np.asarray(A, dtype=float)
    n = A.shape[0]
    nrm = norm1(A)
    k = max(0, int(np.ceil(np.log2(nrm))) + 1) if nrm > 0 else 0
    one = 1 << bits
    X = np.array([[int(np.ldexp(a, bits - k)) for a in row] for row in A], dtype=object)
    I = np.array([[one if i == j else 0 for j in range(n)] for i in range(n)], dtype=object)
    T, term = I.copy(), I.copy()
    for j in range(1, 80):
        term = (term @ X >> bits) // j
        T = T + term
        if not any(term.flat):
            break
    for _ in range(k):
        T = T @ T >> bits
    return np.array([[v / one for v in row] for row in T], dtype=float)


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


def check_against_scipy(A, record, arbitrated=None):
    E = _core.expm(A)
    R = scipy.linalg.expm(A)
    d = reldiff(E, R)
    record.append(d)
    if d <= AGREE:
        return
    X = exp_reference(A)
    ours, theirs = reldiff(E, X), reldiff(R, X)
    band = max(AGREE, 4 * 2.0**-53 * norm1(A))
    print(f"  n = {A.shape[0]}, ||A|| = {norm1(A):.1e}: |mbint - scipy| = {d:.1e}; error "
          f"against the exact reference: mbint {ours:.1e}, scipy {theirs:.1e} "
          f"(4 u ||A|| = {band:.1e})")
    if arbitrated is not None:
        arbitrated.append((ours, theirs))
    assert ours <= band, (
        f"n = {A.shape[0]}, ||A|| = {norm1(A):.2e}: |mbint - scipy| = {d:.2e}, "
        f"error mbint {ours:.2e}, scipy {theirs:.2e}")


def test_reference_is_exact_on_known_exponentials():
    w = 30.0
    R = exp_reference(np.array([[0.0, -w], [w, 0.0]]))
    assert np.allclose(R, [[np.cos(w), -np.sin(w)], [np.sin(w), np.cos(w)]], rtol=0, atol=1e-16)
    J = np.diag([-2.0] * 4) + np.diag([1.0] * 3, 1)
    R = exp_reference(J)
    exact = np.exp(-2.0) * np.array([[1 / np.prod(range(1, j - i + 1)) if j >= i else 0
                                      for j in range(4)] for i in range(4)])
    assert reldiff(R, exact) < 1e-16


@pytest.mark.parametrize("sizes", [range(1, 11), range(11, 31), range(31, 51)],
                         ids=["n1-10", "n11-30", "n31-50"])
def test_random_matrices_against_scipy(sizes):
    rng = np.random.default_rng(sizes.start)
    record = []
    for n in sizes:
        for nrm in (1e-3, 1e-2, 0.1, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3):
            check_against_scipy(random_matrix(rng, n, nrm), record)
    record = np.array(record)
    print(f"sizes {sizes.start}..{sizes.stop - 1}: {len(record)} matrices, "
          f"median |mbint - scipy| = {np.median(record):.1e}, max {record.max():.1e}, "
          f"{np.sum(record > AGREE)} above {AGREE:.0e} (arbitrated by the exact reference)")
    assert np.sum(record <= AGREE) >= 0.95 * len(record)


def test_small_norms_agree_to_1e13():
    """Below ||A|| = 10 the agreement is unconditional."""
    rng = np.random.default_rng(7)
    worst = 0.0
    for n in range(1, 51, 3):
        for nrm in (1e-3, 1e-2, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0):
            A = random_matrix(rng, n, nrm)
            worst = max(worst, reldiff(_core.expm(A), scipy.linalg.expm(A)))
    assert worst <= AGREE, worst


@pytest.mark.parametrize("m", [1, 2, 4, 8, 12, 20, 30, 48])
def test_llm_block_matrices_against_scipy(m):
    """h [[J, f_t, f], [0, 0, 1], [0, 0, 0]] for a random J (eigenvalues with h Re lam <= 20),
    h ||J|| from 1e-3 to 1e3; the block structure of exp is kept exactly."""
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
            check_against_scipy(A, record)
            E = _core.expm(A)
            assert np.all(E[m:, :m] == 0.0)
            assert E[m, m] == 1.0 and E[m + 1, m + 1] == 1.0 and E[m + 1, m] == 0.0
            assert abs(E[m, m + 1] - h) <= 2 * np.spacing(h)
    print(f"m = {m}: max |mbint - scipy| = {max(record):.1e}")


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
