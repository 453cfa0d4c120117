//! The unified integrator of seed 004 §3: positions q and circuit states x are the primary
//! variables of one Newton–Raphson iteration.
//!
//! The trapezoidal rule on both, q̇ = (2/Δt) q + q̂̇, q̈ = (4/Δt²) q + q̂̈ (eqs. 7–8) and
//! ẋ = (2/Δt) x + x̂̇ (eq. 22 with p → x), turns the equations of motion and the circuit
//! equations into f(q, x) = 0 with the residual of eq. 25,
//! f = (Δt²/4) [M q̈ + Φ_qᵀ α Φ + Φ_qᵀ λ* − Q(q, q̇, x);  ẋ − h(x, s(q), ṡ(q, q̇), u)],
//! and the approximate, non-symmetric tangent of eq. 26,
//! [ M + (Δt/2) C + (Δt²/4)(Φ_qᵀ α Φ_q + K)      −(Δt²/4) ∂Q/∂x          ]
//! [ −(Δt/2)((Δt/2) ∂h/∂q + ∂h/∂q̇)              (Δt/2)(I − (Δt/2) ∂h/∂x) ].
//! With s = s(q): ∂Q/∂x = g (∂F/∂x)ᵀ, ∂h/∂q = (∂h/∂s) gᵀ + (∂h/∂ṡ) q̇ᵀ ∂²s/∂q², ∂h/∂q̇ = (∂h/∂ṡ) gᵀ
//! (g = ∂s/∂q; the q̇ᵀ∂²s/∂q² term, zero for the rod, is kept for the cranes). The multipliers
//! are updated after every iteration, λ* ← λ* + α Φ (eq. 6). The circuit rows are scaled by the
//! states' nominal values, so the matrix stays well conditioned with pressures in Pa. After
//! convergence q̇ and q̈ are projected exactly as in the multibody solver (eqs. 14–16) and ẋ is
//! re-evaluated as h at the projected velocities.
//!
//! **Restart** ([`consistent_rates`]): at a communication point where an input jumps, q̈_n, λ
//! and ẋ_n are recomputed with the new input before stepping; reusing the stored ẋ_n would
//! average the old and the new input over the first step, an O(Δt) timing error (SPEC §5.2).

use crate::circuit::Circuit;
use fmu_multibody::mechanism::{applied_forces, CylinderForce, ForceLaw, Mechanism, MAX_ACTUATORS};
use fmu_multibody::solver::{self, SolverError, State};
use nalgebra::{DMatrix, DVector, SVector};

/// Solver settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Penalty α (seed 004: 1e10 at Δt = 10 ms; keep α Δt² constant when Δt changes).
    pub alpha: f64,
    /// Newton tolerance on the position correction ‖Δq‖∞ (m or rad).
    pub tol_q: f64,
    /// Newton tolerance on the circuit-state correction, relative to the states' nominal
    /// values (‖Δx / x_nominal‖∞; 1e-9 = 1 mPa for pressures).
    pub tol_x: f64,
    /// Newton iteration cap.
    pub max_iter: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self { alpha: 1e10, tol_q: 1e-10, tol_x: 1e-9, max_iter: 20 }
    }
}

/// The unified state: the mechanism's and each cylinder's circuit.
#[derive(Debug, Clone, PartialEq)]
pub struct UState<const N: usize, const M: usize, const P: usize> {
    /// q, q̇, q̈, λ.
    pub mech: State<N, M>,
    /// Circuit states x_k.
    pub x: [SVector<f64, P>; MAX_ACTUATORS],
    /// Their rates ẋ_k.
    pub xd: [SVector<f64, P>; MAX_ACTUATORS],
}

impl<const N: usize, const M: usize, const P: usize> UState<N, M, P> {
    /// Whether every entry is finite.
    pub fn is_finite(&self) -> bool {
        self.mech.is_finite() && self.x.iter().chain(&self.xd).all(|v| v.iter().all(|x| x.is_finite()))
    }
}

/// The cylinder forces of circuits in states `x`.
pub struct CircuitForces<'a, const P: usize, C: Circuit<P>> {
    /// The circuits, one per cylinder.
    pub circuits: &'a [C],
    /// Their states.
    pub x: &'a [SVector<f64, P>; MAX_ACTUATORS],
}

impl<const P: usize, C: Circuit<P>> ForceLaw for CircuitForces<'_, P, C> {
    fn force(&self, k: usize, _tau: f64, s: f64, s_dot: f64) -> CylinderForce {
        match self.circuits.get(k) {
            Some(c) => c.force(&self.x[k], s, s_dot).0,
            None => CylinderForce::default(),
        }
    }
}

/// Sets q̈, λ (constrained equations of motion) and ẋ = h at the state's (q, q̇, x) with the
/// control inputs `u` (one per cylinder).
pub fn consistent_rates<const N: usize, const M: usize, const P: usize, C: Circuit<P>>(
    mech: &impl Mechanism<N, M>,
    circuits: &[C],
    st: &mut UState<N, M, P>,
    u: &[f64],
) -> Result<(), SolverError> {
    let law = CircuitForces { circuits, x: &st.x };
    solver::consistent_accelerations(mech, &law, &mut st.mech, 0.0, 0.0, 0.0)?;
    for (k, c) in circuits.iter().enumerate() {
        let a = mech.actuator(k);
        let (s, sd) = (a.length(&st.mech.q), a.gradient(&st.mech.q).dot(&st.mech.qd));
        st.xd[k] = c.rates(&st.x[k], s, sd, u.get(k).copied().unwrap_or(0.0));
    }
    Ok(())
}

/// Advances `st` by one step `h`; `u1` are the control inputs at the end of the step. Returns
/// the Newton iteration count.
pub fn step<const N: usize, const M: usize, const P: usize, C: Circuit<P>>(
    mech: &impl Mechanism<N, M>,
    circuits: &[C],
    settings: &Settings,
    st: &mut UState<N, M, P>,
    u1: &[f64],
    h: f64,
) -> Result<u32, SolverError> {
    let alpha = settings.alpha;
    let nc = circuits.len().min(MAX_ACTUATORS);
    let n = N + nc * P;
    let mm = mech.mass_matrix();
    let hh4 = 0.25 * h * h;
    let (c1, c2) = (2.0 / h, 4.0 / (h * h));
    // Eq. 8 and its analogue for x: the known parts of the end-of-step rates.
    let qd_hat = -(st.mech.q * c1 + st.mech.qd);
    let qdd_hat = -(st.mech.q * c2 + st.mech.qd * (4.0 / h) + st.mech.qdd);
    let mut xd_hat = [SVector::<f64, P>::zeros(); MAX_ACTUATORS];
    for ((hat, x), xd) in xd_hat.iter_mut().zip(&st.x).zip(&st.xd).take(nc) {
        *hat = -(x * c1 + xd);
    }
    let mut x = st.x;
    let nominal: Vec<SVector<f64, P>> = circuits.iter().map(Circuit::nominal).collect();
    let mut q = st.mech.q + st.mech.qd * h + st.mech.qdd * (0.5 * h * h);
    // Predictor of the circuit states: x_n + h ẋ_n where it fits the trapezoidal rule better than
    // x_n (smooth motion); x_n right after an input jump, where ẋ_n is large and h|λ| ≫ 1 makes
    // the explicit step overshoot.
    {
        let qd = q * c1 + qd_hat;
        for (k, circuit) in circuits.iter().enumerate().take(nc) {
            let a = mech.actuator(k);
            let (s, sd) = (a.length(&q), a.gradient(&q).dot(&qd));
            let uk = u1.get(k).copied().unwrap_or(0.0);
            let misfit = |xk: &SVector<f64, P>| {
                let r = (xk * c1 + xd_hat[k]) - circuit.rates(xk, s, sd, uk);
                r.component_div(&nominal[k]).amax()
            };
            let explicit = st.x[k] + st.xd[k] * h;
            if misfit(&explicit) < misfit(&st.x[k]) {
                x[k] = explicit;
            }
        }
    }
    let mut lambda = st.mech.lambda;
    let mut phi = mech.constraints(&q);
    let mut jac = DMatrix::<f64>::zeros(n, n);
    let mut rhs = DVector::<f64>::zeros(n);
    let (mut iterations, mut residual, mut correction) = (0, f64::INFINITY, f64::INFINITY);
    while iterations < settings.max_iter {
        iterations += 1;
        let qd = q * c1 + qd_hat;
        let qdd = q * c2 + qdd_hat;
        let j = mech.jacobian(&q);
        let jt = j.transpose();
        let ap = applied_forces(mech, &CircuitForces { circuits, x: &x }, &q, &qd, 0.0);
        // Mechanics rows (eq. 25, first block) and their q-columns (eq. 26, first block).
        let fq = (mm * qdd + jt * (phi * alpha + lambda) - ap.q) * hh4;
        let jqq = mm + ap.c * (0.5 * h) + (jt * j * alpha + ap.k) * hh4;
        jac.fill(0.0);
        for r in 0..N {
            rhs[r] = -fq[r];
            for c in 0..N {
                jac[(r, c)] = jqq[(r, c)];
            }
        }
        for (k, circuit) in circuits.iter().enumerate().take(nc) {
            let a = mech.actuator(k);
            let g = a.gradient(&q);
            let (s, sd) = (a.length(&q), g.dot(&qd));
            let hs = a.hessian(&q) * qd; // ∂ṡ/∂q
            let uk = u1.get(k).copied().unwrap_or(0.0);
            let rate = circuit.rates(&x[k], s, sd, uk);
            let dh = circuit.rate_jacobians(&x[k], s, sd, uk);
            let (_, df_dx) = circuit.force(&x[k], s, sd);
            let xd = x[k] * c1 + xd_hat[k];
            let off = N + k * P;
            for i in 0..P {
                let w = 1.0 / nominal[k][i];
                // Circuit rows (eq. 25, second block), scaled by 1/x_nominal.
                rhs[off + i] = -(xd[i] - rate[i]) * hh4 * w;
                // −(Δt/2)((Δt/2) ∂h/∂q + ∂h/∂q̇) with ∂ṡ/∂q̇ = gᵀ, ∂ṡ/∂q = q̇ᵀ ∂²s/∂q².
                for c in 0..N {
                    jac[(off + i, c)] = -hh4 * (dh.ds[i] * g[c] + dh.dsd[i] * (hs[c] + c1 * g[c])) * w;
                }
                // (Δt/2)(I − (Δt/2) ∂h/∂x), in scaled unknowns x/x_nominal.
                for c in 0..P {
                    let id = if i == c { c1 } else { 0.0 };
                    jac[(off + i, off + c)] = hh4 * (id - dh.dx[(i, c)]) * w * nominal[k][c];
                }
            }
            // −(Δt²/4) ∂Q/∂x = −(Δt²/4) g (∂F/∂x)ᵀ.
            for r in 0..N {
                for c in 0..P {
                    jac[(r, off + c)] = -hh4 * g[r] * df_dx[c] * nominal[k][c];
                }
            }
        }
        residual = rhs.norm();
        let lu = jac.clone().lu();
        let dx = lu.solve(&rhs).ok_or(SolverError::Singular)?;
        if !dx.iter().all(|v| v.is_finite()) {
            return Err(SolverError::NotFinite);
        }
        let mut dq_max: f64 = 0.0;
        for r in 0..N {
            q[r] += dx[r];
            dq_max = dq_max.max(dx[r].abs());
        }
        let mut dx_max: f64 = 0.0;
        for k in 0..nc {
            for i in 0..P {
                let d = dx[N + k * P + i];
                x[k][i] += d * nominal[k][i];
                dx_max = dx_max.max(d.abs());
            }
        }
        phi = mech.constraints(&q);
        lambda += phi * alpha;
        correction = dq_max;
        if dq_max <= settings.tol_q && dx_max <= settings.tol_x {
            let law = CircuitForces { circuits, x: &x };
            let (qd, qdd) = solver::project(mech, &law, &q, &(q * c1 + qd_hat), &(q * c2 + qdd_hat), 0.0, h, alpha)?;
            let mut xd = [SVector::<f64, P>::zeros(); MAX_ACTUATORS];
            for (k, circuit) in circuits.iter().enumerate().take(nc) {
                let a = mech.actuator(k);
                xd[k] = circuit.rates(&x[k], a.length(&q), a.gradient(&q).dot(&qd), u1.get(k).copied().unwrap_or(0.0));
            }
            *st = UState { mech: State { q, qd, qdd, lambda }, x, xd };
            if !st.is_finite() {
                return Err(SolverError::NotFinite);
            }
            return Ok(iterations);
        }
    }
    Err(SolverError::Newton { iterations, residual, correction })
}
