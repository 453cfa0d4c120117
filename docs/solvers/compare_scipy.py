"""SciPy's stiff solvers on the problems of master/src/ode/tests_bdf.rs, for docs/model-exchange.md
("Solvers"): steps, right-hand-side evaluations (Jacobian columns included), Jacobians and the error
against the reference values the Rust tests use.

    /work/venv/bin/python docs/solvers/compare_scipy.py
"""
import numpy as np
from scipy.integrate import solve_ivp


def robertson(t, y):
    return [-0.04 * y[0] + 1e4 * y[1] * y[2],
            0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
            3e7 * y[1] ** 2]


def van_der_pol(t, y):
    return [y[1], 1000.0 * (1 - y[0] ** 2) * y[1] - y[0]]


# (name, f, y0, t_end, rtol, atol, reference y(t_end), components compared)
PROBLEMS = [
    ("Robertson to 1e5", robertson, [1.0, 0.0, 0.0], 1e5, 1e-6, 1e-10,
     [1.786592114210e-2, 7.274751468437e-8, 9.821340061104e-1]),
    ("Van der Pol mu=1000 to 3000", van_der_pol, [2.0, 0.0], 3000.0, 1e-6, 1e-8,
     [-1.51060693676, None]),
]

for name, f, y0, t_end, rtol, atol, ref in PROBLEMS:
    for method in ["BDF", "Radau", "LSODA"]:
        s = solve_ivp(f, (0.0, t_end), y0, method=method, rtol=rtol, atol=atol)
        n = len(y0)
        # BDF's and Radau's nfev leave out the finite-difference Jacobian columns (at least n per
        # Jacobian); LSODA's calls all go through the counted wrapper (its njev counts LUs).
        rhs = s.nfev + (0 if method == "LSODA" else n * s.njev)
        jac = "LUs      " if method == "LSODA" else "jacobians"
        err = max(abs(s.y[i, -1] - r) / abs(r) for i, r in enumerate(ref) if r is not None)
        print(f"{name:28} {method:6} steps {s.t.size - 1:5}  rhs {rhs:6}  {jac} {s.njev:4}  "
              f"max relative error {err:.1e}")
