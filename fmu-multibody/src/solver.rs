//! Time integration of a [`Mechanism`]: the index-3 augmented Lagrangian with projections
//! (I3AL-P) and the index-1 augmented Lagrangian (I1AL), both with the trapezoidal rule.
//!
//! **I3AL-P** (seed 004 §2 eqs. 5–16; Publication III eqs. 18–19; DIGEST §4.2). Positions are
//! the primary variables. The trapezoidal rule gives q̇_{n+1} = (2/Δt) q_{n+1} + q̂̇_n,
//! q̈_{n+1} = (4/Δt²) q_{n+1} + q̂̈_n (eqs. 7–8). Newton–Raphson solves the scaled residual
//! f(q) = (Δt²/4)(M q̈ + Φ_qᵀ α Φ + Φ_qᵀ λ* − Q) = 0 (eqs. 10–12) with the tangent
//! M + (Δt/2) C + (Δt²/4)(Φ_qᵀ α Φ_q + K) (eq. 13, with the transpose the seed drops), and the
//! multipliers are updated after every iteration, λ* ← λ* + α Φ (eq. 6), starting from the
//! previous step's. After convergence velocities and accelerations are projected with
//! W = M + (Δt/2) C + (Δt²/4) K (eqs. 14–16):
//! (W + (Δt²/4) Φ_qᵀ α Φ_q) q̇ = W q̇*, (W + (Δt²/4) Φ_qᵀ α Φ_q) q̈ = W q̈* − (Δt²/4) Φ_qᵀ α Φ̇_q q̇.
//!
//! **I1AL** (Publication III eq. 17; DIGEST §4.1). Accelerations are the primary variables. The
//! equations of motion with the Baumgarte-like terms,
//! (M + Φ_qᵀ α Φ_q) q̈ + Φ_qᵀ λ* = Q − Φ_qᵀ α (Φ̇_q q̇ + 2ξω Φ̇ + ω² Φ) (17a),
//! λ* ← λ* + α (Φ̈ + 2ξω Φ̇ + ω² Φ) (17b),
//! are integrated with the trapezoidal rule, as Publication III §3.1.3 and §3.3 state:
//! q̇_{n+1} = q̇_n + (Δt/2)(q̈_n + q̈_{n+1}), q_{n+1} = q_n + Δt q̇_n + (Δt²/4)(q̈_n + q̈_{n+1}).
//! The unknown q̈_{n+1} is found by Newton–Raphson on the residual of 17a (positions and
//! velocities follow from q̈_{n+1}), tangent
//! M + (Δt/2) C + (Δt²/4) K + α Φ_qᵀ [Φ_q (1 + ξωΔt + ω²Δt²/4) + (Δt²/4) Φ̇_q(q̈) + (Δt + ξωΔt²/2) Φ̇_q(q̇)]
//! (Φ̇_q(v) = Σ_k ∂Φ_q/∂q_k v_k; without the last two terms Newton converges only linearly in fast
//! motion), with the multiplier update 17b after every iteration. (DIGEST §1.9 item 13: the dissertation's summary of
//! Publication IV mentions an explicit integrator with I1AL; we follow Publication III, which
//! states the trapezoidal rule for both algorithms, and implement no explicit variant.) There
//! is no projection: the constraints are held by the penalty and the Baumgarte terms.
//!
//! **Restart** ([`consistent_accelerations`]): q̈ and λ at a given (q, q̇) and input, from the
//! constrained equations of motion [M Φ_qᵀ; Φ_q 0] [q̈; λ] = [Q; −Φ̇_q q̇ − 2ξωΦ̇ − ω²Φ]
//! (ξ = ω = 0 for I3AL-P). Used at initialization and at communication points where an input
//! jumps (SPEC §3.2): the trapezoidal rule otherwise carries the previous input's q̈_n into the
//! step, an H/2 delay.

use crate::kkt::{kkt_solve_heap, Kkt, KKT_CAPACITY};
use crate::lu::Lu;
use crate::mechanism::{applied_forces, generalized_forces, ForceLaw, Mechanism};
use nalgebra::{SMatrix, SVector};

/// The two algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Index-3 augmented Lagrangian with projections, positions primary (default).
    I3alP,
    /// Index-1 augmented Lagrangian, accelerations primary.
    I1al,
}

impl Method {
    /// From the FMU enumeration value: 1 = I3AL-P, 2 = I1AL.
    pub fn from_i32(v: i32) -> Option<Self> {
        match v {
            1 => Some(Self::I3alP),
            2 => Some(Self::I1al),
            _ => None,
        }
    }

    /// Name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::I3alP => "I3AL-P",
            Self::I1al => "I1AL",
        }
    }
}

/// Solver settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The algorithm.
    pub method: Method,
    /// Penalty α of I3AL-P. It enters as (Δt²/4) α next to the masses; (Δt²/4) α ≫ the largest
    /// mass makes both the multiplier iteration and the projections converge fast.
    pub alpha_i3al: f64,
    /// Penalty α of I1AL. It enters next to the masses without a step factor; too large a value
    /// costs accuracy (condition of M + Φ_qᵀαΦ_q).
    pub alpha_i1al: f64,
    /// Newton tolerance: largest position correction of an iteration, ‖Δq‖∞ (I3AL-P) or
    /// (Δt²/4)‖Δq̈‖∞ (I1AL), in m or rad.
    pub tol: f64,
    /// Newton iteration cap.
    pub max_iter: u32,
    /// Baumgarte damping ratio ξ (I1AL).
    pub xi: f64,
    /// Baumgarte frequency ω (rad/s) (I1AL).
    pub omega: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            method: Method::I3alP,
            alpha_i3al: 1e11,
            alpha_i1al: 1e7,
            tol: 1e-10,
            max_iter: 20,
            xi: 1.0,
            omega: 10.0,
        }
    }
}

/// The integrated state.
#[derive(Debug, Clone, PartialEq)]
pub struct State<const N: usize, const M: usize> {
    /// Positions q.
    pub q: SVector<f64, N>,
    /// Velocities q̇.
    pub qd: SVector<f64, N>,
    /// Accelerations q̈.
    pub qdd: SVector<f64, N>,
    /// Multipliers λ*.
    pub lambda: SVector<f64, M>,
}

impl<const N: usize, const M: usize> State<N, M> {
    /// At rest at `q`, with zero accelerations and multipliers (call
    /// [`consistent_accelerations`] next).
    pub fn at_rest(q: SVector<f64, N>) -> Self {
        Self { q, qd: SVector::zeros(), qdd: SVector::zeros(), lambda: SVector::zeros() }
    }

    /// Whether every entry is finite.
    pub fn is_finite(&self) -> bool {
        // Four loops: a chain of iterators costs more than the test itself.
        finite(&self.q) && finite(&self.qd) && finite(&self.qdd) && finite(&self.lambda)
    }
}

/// Constraint violation norms (Euclidean) at position, velocity and acceleration level.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Violation {
    /// ‖Φ‖.
    pub position: f64,
    /// ‖Φ̇‖ = ‖Φ_q q̇‖.
    pub velocity: f64,
    /// ‖Φ̈‖ = ‖Φ_q q̈ + Φ̇_q q̇‖.
    pub acceleration: f64,
}

/// The constraint violations of a state.
pub fn violation<const N: usize, const M: usize>(mech: &impl Mechanism<N, M>, st: &State<N, M>) -> Violation {
    let j = mech.jacobian(&st.q);
    Violation {
        position: mech.constraints(&st.q).norm(),
        velocity: (j * st.qd).norm(),
        acceleration: (j * st.qdd + mech.jacobian_dot_times_velocity(&st.q, &st.qd)).norm(),
    }
}

/// Why a step failed.
#[derive(Debug, Clone, PartialEq)]
pub enum SolverError {
    /// Newton did not converge within the cap.
    Newton {
        /// Iterations done.
        iterations: u32,
        /// Norm of the (scaled) residual at the last iterate.
        residual: f64,
        /// Last correction ‖Δq‖∞ (position units).
        correction: f64,
    },
    /// The Newton or projection matrix is singular.
    Singular,
    /// The state became NaN or infinite.
    NotFinite,
}

impl std::fmt::Display for SolverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Newton { iterations, residual, correction } => write!(
                f,
                "Newton did not converge after {iterations} iterations (residual norm {residual:.3e}, last correction {correction:.3e})"
            ),
            Self::Singular => write!(f, "singular Newton matrix (constraints degenerate)"),
            Self::NotFinite => write!(f, "the state became NaN or infinite"),
        }
    }
}

fn finite<const R: usize, const C: usize>(m: &SMatrix<f64, R, C>) -> bool {
    m.iter().all(|x| x.is_finite())
}

/// Sets q̈ and λ of `st` from the constrained equations of motion at (q, q̇), with the input at
/// `tau` and Baumgarte terms 2ξωΦ̇ + ω²Φ on the acceleration constraint (pass 0, 0 for the
/// exact Φ̈ = 0).
///
/// The restart runs at every communication point whose input jumped, i.e. at nearly every step
/// of a co-simulation, so it allocates nothing: the Schur complement Φ_q M⁻¹ Φ_qᵀ in fixed-size
/// matrices when M is regular, else the whole (N + M)² system on the stack when it fits
/// ([`KKT_CAPACITY`]), both LU with partial pivoting and one step of iterative refinement.
/// Larger mechanisms with a singular M use a heap matrix.
pub fn consistent_accelerations<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    law: &impl ForceLaw,
    st: &mut State<N, M>,
    tau: f64,
    xi: f64,
    omega: f64,
) -> Result<(), SolverError> {
    consistent_accelerations_factored(mech, Lu::new(mech.mass_matrix()).as_ref(), law, st, tau, xi, omega)
}

/// [`consistent_accelerations`] with the mass matrix already factored: `mass` is
/// `Lu::new(mech.mass_matrix())` (`None` when M is singular), which a caller that restarts
/// often evaluates once, since M is constant. The same arithmetic, so the same result.
pub fn consistent_accelerations_factored<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    mass: Option<&Lu<N>>,
    law: &impl ForceLaw,
    st: &mut State<N, M>,
    tau: f64,
    xi: f64,
    omega: f64,
) -> Result<(), SolverError> {
    let mm = mech.mass_matrix();
    let j = mech.jacobian(&st.q);
    let forces = generalized_forces(mech, law, &st.q, &st.qd, tau);
    let rhs_c = -(mech.jacobian_dot_times_velocity(&st.q, &st.qd)
        + (j * st.qd) * (2.0 * xi * omega)
        + mech.constraints(&st.q) * (omega * omega));
    let schur = mass.and_then(|mass| kkt_solve_schur(mass, &mm, &j, &forces, &rhs_c));
    let (qdd, lambda) = if let Some(solution) = schur {
        solution
    } else if N + M <= KKT_CAPACITY {
        Kkt::<N, M>::new(&mm, &j).ok_or(SolverError::Singular)?.solve_refined(&mm, &j, &forces, &rhs_c)
    } else {
        kkt_solve_heap(&mm, &j, &forces, &rhs_c).ok_or(SolverError::Singular)?
    };
    if !(finite(&qdd) && finite(&lambda)) {
        return Err(SolverError::Singular);
    }
    st.qdd = qdd;
    st.lambda = lambda;
    Ok(())
}

/// The restart system [M Φ_qᵀ; Φ_q 0] [q̈; λ] = [Q; c] by its Schur complement, all in
/// fixed-size matrices: with Y = M⁻¹ Φ_qᵀ and z = M⁻¹ Q, (Φ_q Y) λ = Φ_q z − c and q̈ = z − Y λ,
/// then one step of iterative refinement on the full system; `mass` holds the factors of M.
/// `None` when Φ_q M⁻¹ Φ_qᵀ is singular (redundant constraints): the caller factors the whole
/// system, as it does when M is singular (a massless coordinate).
fn kkt_solve_schur<const N: usize, const M: usize>(
    mass: &Lu<N>,
    mm: &SMatrix<f64, N, N>,
    j: &SMatrix<f64, M, N>,
    q: &SVector<f64, N>,
    c: &SVector<f64, M>,
) -> Option<(SVector<f64, N>, SVector<f64, M>)> {
    let jt = j.transpose();
    let mut y = SMatrix::<f64, N, M>::zeros();
    for k in 0..M {
        y.set_column(k, &mass.solve(&jt.column(k).into_owned()));
    }
    let schur = Lu::new(j * y)?;
    let solve = |rq: &SVector<f64, N>, rc: &SVector<f64, M>| {
        let z = mass.solve(rq);
        let lambda = schur.solve(&(j * z - rc));
        (z - y * lambda, lambda)
    };
    let (qdd, lambda) = solve(q, c);
    let (dqdd, dlambda) = solve(&(q - mm * qdd - jt * lambda), &(c - j * qdd));
    Some((qdd + dqdd, lambda + dlambda))
}

/// Advances `st` by one step `h`; the applied forces at the end of the step are taken at `tau1`
/// (seconds into the communication step). Returns the Newton iteration count.
pub fn step<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    law: &impl ForceLaw,
    settings: &Settings,
    st: &mut State<N, M>,
    tau1: f64,
    h: f64,
) -> Result<u32, SolverError> {
    let it = match settings.method {
        Method::I3alP => step_i3alp(mech, law, settings, st, tau1, h)?,
        Method::I1al => step_i1al(mech, law, settings, st, tau1, h)?,
    };
    if !st.is_finite() {
        return Err(SolverError::NotFinite);
    }
    Ok(it)
}

fn step_i3alp<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    law: &impl ForceLaw,
    s: &Settings,
    st: &mut State<N, M>,
    tau1: f64,
    h: f64,
) -> Result<u32, SolverError> {
    let alpha = s.alpha_i3al;
    let mm = mech.mass_matrix();
    let hh4 = 0.25 * h * h;
    let (c1, c2) = (2.0 / h, 4.0 / (h * h));
    // Eq. 8: q̂̇_n and q̂̈_n (with the sign that makes eq. 7 a sum).
    let qd_hat = -(st.q * c1 + st.qd);
    let qdd_hat = -(st.q * c2 + st.qd * (4.0 / h) + st.qdd);
    // Predictor: Taylor expansion with the known acceleration.
    let mut q = st.q + st.qd * h + st.qdd * (0.5 * h * h);
    let mut lambda = st.lambda;
    let mut phi = mech.constraints(&q);
    let mut iterations = 0;
    let mut correction = f64::INFINITY;
    let mut residual = f64::INFINITY;
    // The factored tangent of eq. 13 is kept from one iteration to the next while the
    // corrections shrink at least tenfold (the iterate moves by ≪ 1e-6 m after the first
    // correction, so it hardly changes); otherwise it is evaluated afresh. The converged state
    // meets the same tolerance.
    let mut kept: Option<Lu<N>> = None;
    while iterations < s.max_iter {
        iterations += 1;
        let qd = q * c1 + qd_hat;
        let qdd = q * c2 + qdd_hat;
        let j = mech.jacobian(&q);
        let jt = j.transpose();
        let (forces, tangent) = match kept.take() {
            Some(lu) => (generalized_forces(mech, law, &q, &qd, tau1), lu),
            None => {
                let ap = applied_forces(mech, law, &q, &qd, tau1);
                let tangent = mm + ap.c * (0.5 * h) + (jt * j * alpha + ap.k) * hh4;
                (ap.q, Lu::new(tangent).ok_or(SolverError::Singular)?)
            }
        };
        let f = (mm * qdd + jt * (phi * alpha + lambda) - forces) * hh4;
        residual = f.norm();
        let dq = tangent.solve(&(-f));
        if !finite(&dq) {
            return Err(SolverError::NotFinite);
        }
        q += dq;
        phi = mech.constraints(&q);
        lambda += phi * alpha;
        let previous = correction;
        correction = dq.amax();
        if correction <= 0.1 * previous {
            kept = Some(tangent);
        }
        if correction <= s.tol {
            let (qd, qdd) = project(mech, law, &q, &(q * c1 + qd_hat), &(q * c2 + qdd_hat), tau1, h, alpha)?;
            *st = State { q, qd, qdd, lambda };
            return Ok(iterations);
        }
    }
    Err(SolverError::Newton { iterations, residual, correction })
}

/// Mass-damping-stiffness-orthogonal projections of I3AL-P (seed 004 eqs. 14–16) at the
/// converged positions `q`: with W = M + (h/2) C + (h²/4) K,
/// (W + (h²/4) Φ_qᵀ α Φ_q) q̇ = W q̇*, (W + (h²/4) Φ_qᵀ α Φ_q) q̈ = W q̈* − (h²/4) Φ_qᵀ α Φ̇_q q̇.
/// Returns the projected (q̇, q̈). Shared by the unified solver (seed 004 §3 uses the same
/// projections).
#[allow(clippy::too_many_arguments)]
pub fn project<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    law: &impl ForceLaw,
    q: &SVector<f64, N>,
    qd_star: &SVector<f64, N>,
    qdd_star: &SVector<f64, N>,
    tau1: f64,
    h: f64,
    alpha: f64,
) -> Result<(SVector<f64, N>, SVector<f64, N>), SolverError> {
    let hh4 = 0.25 * h * h;
    let j = mech.jacobian(q);
    let jt = j.transpose();
    let ap = applied_forces(mech, law, q, qd_star, tau1);
    let w = mech.mass_matrix() + ap.c * (0.5 * h) + ap.k * hh4;
    let p = Lu::new(w + jt * j * (alpha * hh4)).ok_or(SolverError::Singular)?;
    let qd = p.solve(&(w * qd_star));
    let conv = mech.jacobian_dot_times_velocity(q, &qd);
    let qdd = p.solve(&(w * qdd_star - jt * conv * (alpha * hh4)));
    Ok((qd, qdd))
}

fn step_i1al<const N: usize, const M: usize>(
    mech: &impl Mechanism<N, M>,
    law: &impl ForceLaw,
    s: &Settings,
    st: &mut State<N, M>,
    tau1: f64,
    h: f64,
) -> Result<u32, SolverError> {
    let alpha = s.alpha_i1al;
    let mm = mech.mass_matrix();
    let hh4 = 0.25 * h * h;
    let (b1, b0) = (2.0 * s.xi * s.omega, s.omega * s.omega);
    // Positions and velocities at the end of the step for accelerations a (trapezoidal rule),
    // the Jacobian there and the stabilized acceleration constraint c = Φ̈ + 2ξωΦ̇ + ω²Φ.
    let eval = |a: &SVector<f64, N>| {
        let q = st.q + st.qd * h + (st.qdd + a) * hh4;
        let qd = st.qd + (st.qdd + a) * (0.5 * h);
        let j = mech.jacobian(&q);
        let c = j * a + mech.jacobian_dot_times_velocity(&q, &qd) + (j * qd) * b1 + mech.constraints(&q) * b0;
        (q, qd, j, c)
    };
    // Predictor: the acceleration stays.
    let mut a = st.qdd;
    let mut lambda = st.lambda;
    let (mut q, mut qd, mut j, mut c) = eval(&a);
    let mut iterations = 0;
    let mut correction = f64::INFINITY;
    let mut residual = f64::INFINITY;
    while iterations < s.max_iter {
        iterations += 1;
        let jt = j.transpose();
        let ap = applied_forces(mech, law, &q, &qd, tau1);
        // Eq. 17a as a residual: M q̈ + Φ_qᵀ [λ* + α (Φ̈ + 2ξωΦ̇ + ω²Φ)] − Q.
        let r = mm * a + jt * (lambda + c * alpha) - ap.q;
        residual = r.norm();
        // ∂r/∂q̈ with q = q(q̈), q̇ = q̇(q̈): the constraint part is α Φ_qᵀ ∂c/∂q̈, with
        // ∂(Φ_q q̈)/∂q = Φ̇_q(q̈), ∂(Φ̇_q q̇)/∂q̇ = 2 Φ̇_q(q̇), ∂(Φ_q q̇)/∂q = Φ̇_q(q̇) (third
        // derivatives of Φ and the derivative of Φ_qᵀ are left out).
        let dc = j * (1.0 + 0.5 * h * b1 + hh4 * b0)
            + mech.jacobian_dot(&q, &a) * hh4
            + mech.jacobian_dot(&q, &qd) * (h + hh4 * b1);
        let tangent = mm + jt * dc * alpha + ap.c * (0.5 * h) + ap.k * hh4;
        let da = Lu::new(tangent).ok_or(SolverError::Singular)?.solve(&(-r));
        if !finite(&da) {
            return Err(SolverError::NotFinite);
        }
        a += da;
        (q, qd, j, c) = eval(&a);
        // Eq. 17b with the updated accelerations (and the positions and velocities they give).
        lambda += c * alpha;
        correction = da.amax() * hh4;
        if correction <= s.tol {
            *st = State { q, qd, qdd: a, lambda };
            return Ok(iterations);
        }
    }
    Err(SolverError::Newton { iterations, residual, correction })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crane::Crane;
    use crate::mechanism::GivenForces;

    /// Free fall of the crane from rest (F = 0) for 0.2 s at 1 ms: both solvers stay assembled
    /// and conserve energy closely; they agree with each other.
    #[test]
    fn both_solvers_agree_on_a_free_fall() {
        let c = Crane::default();
        let law = GivenForces(|_, _| 0.0);
        let mut finals = Vec::new();
        for method in [Method::I3alP, Method::I1al] {
            let settings = Settings { method, tol: 1e-12, ..Settings::default() };
            let mut st = State::<5, 3>::at_rest(c.initial_positions());
            consistent_accelerations(&c, &law, &mut st, 0.0, 0.0, 0.0).unwrap();
            let e0 = c.potential_energy(&st.q);
            for _ in 0..200 {
                step(&c, &law, &settings, &mut st, 1e-3, 1e-3).unwrap();
            }
            let e = c.kinetic_energy(&st.qd) + c.potential_energy(&st.q);
            assert!(c.kinetic_energy(&st.qd) > 100.0, "it falls");
            assert!((e - e0).abs() < 0.1, "{}: energy drift {} J", method.name(), e - e0);
            assert!(violation(&c, &st).position < 1e-6, "{:?}", violation(&c, &st));
            finals.push(st.q);
        }
        assert!((finals[0] - finals[1]).amax() < 1e-4, "{:?}", finals[0] - finals[1]);
    }

    /// The three restart solvers (Schur complement, stack KKT, heap KKT) agree to round-off.
    #[test]
    fn restart_solvers_agree() {
        let c = Crane::double();
        let q = c.initial_positions() + SVector::<f64, 5>::new(0.01, -0.02, 0.03, 0.0, 0.01);
        let (mm, j) = (c.mass_matrix(), c.jacobian(&q));
        let forces = SVector::<f64, 5>::new(100.0, -9000.0, 40.0, 5.0, -981.0);
        let rhs = SVector::<f64, 3>::new(0.3, -0.1, 2.0);
        let (a, la) = kkt_solve_schur(&Lu::new(mm).unwrap(), &mm, &j, &forces, &rhs).unwrap();
        let (b, lb) = Kkt::<5, 3>::new(&mm, &j).unwrap().solve_refined(&mm, &j, &forces, &rhs);
        let (d, ld) = kkt_solve_heap(&mm, &j, &forces, &rhs).unwrap();
        for (x, y) in [(a - b, la - lb), (a - d, la - ld)] {
            assert!(x.amax() < 1e-12 * a.amax() && y.amax() < 1e-12 * la.amax(), "{x:?} {y:?}");
        }
        // A massless coordinate: no Schur complement, the full system still solves.
        let mut singular = mm;
        singular[(4, 4)] = 0.0;
        assert!(Lu::new(singular).is_none());
        assert!(Kkt::<5, 3>::new(&singular, &j).is_some());
    }

    #[test]
    fn consistent_accelerations_satisfy_the_acceleration_constraints() {
        let c = Crane::double();
        let law = GivenForces(|k, _| if k == 0 { 9000.0 } else { 300.0 });
        let mut st = State::<5, 3>::at_rest(c.initial_positions());
        st.qd = SVector::<f64, 5>::new(0.1, -0.17, -0.4, 0.2, 0.3);
        // Make the velocities admissible first (project with the Jacobian's null space).
        let j = c.jacobian(&st.q);
        let jt = j.transpose();
        let corr = jt * (j * jt).lu().solve(&(j * st.qd)).unwrap();
        st.qd -= corr;
        consistent_accelerations(&c, &law, &mut st, 0.0, 0.0, 0.0).unwrap();
        let v = violation(&c, &st);
        assert!(v.velocity < 1e-14 && v.acceleration < 1e-12, "{v:?}");
        // Equations of motion hold with these multipliers.
        let ap = applied_forces(&c, &law, &st.q, &st.qd, 0.0);
        let r = c.mass_matrix() * st.qdd + jt * st.lambda - ap.q;
        assert!(r.amax() < 1e-9, "{r:?}");
    }
}
