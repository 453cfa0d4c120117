//! Fixed-step integrators for the circuits' pressure ODEs ẋ = f(τ, x): forward Euler (FWE),
//! trapezoidal rule (TR, implicit, Newton with the analytic Jacobian) and classical RK4.

use nalgebra::{SMatrix, SVector};

/// A first-order ODE with its Jacobian; τ is the time since the start of the communication
/// step (inputs are polynomials in τ).
///
/// Evaluation is split in two: [`point`](Self::point) evaluates what depends on τ alone (the
/// input polynomials and the coefficients that follow from them), once per time point;
/// [`f_at`](Self::f_at) and [`jacobian_at`](Self::jacobian_at) reuse it for every state the
/// Newton iteration of the trapezoidal rule visits at that τ.
pub trait Ode<const N: usize> {
    /// The τ-dependent part of an evaluation.
    type Point;
    /// Evaluates the inputs and input-dependent coefficients at τ.
    fn point(&self, tau: f64) -> Self::Point;
    /// ẋ = f(τ, x) at a prepared τ.
    fn f_at(&self, p: &Self::Point, x: &SVector<f64, N>) -> SVector<f64, N>;
    /// ∂f/∂x at a prepared τ.
    fn jacobian_at(&self, p: &Self::Point, x: &SVector<f64, N>) -> SMatrix<f64, N, N>;
    /// f and ∂f/∂x at the same prepared τ and x (the first Newton iterate of a trapezoidal
    /// step needs both); an ODE whose two share work overrides it.
    fn f_and_jacobian_at(&self, p: &Self::Point, x: &SVector<f64, N>) -> (SVector<f64, N>, SMatrix<f64, N, N>) {
        (self.f_at(p, x), self.jacobian_at(p, x))
    }
    /// ẋ = f(τ, x).
    fn f(&self, tau: f64, x: &SVector<f64, N>) -> SVector<f64, N> {
        self.f_at(&self.point(tau), x)
    }
    /// ∂f/∂x at (τ, x).
    fn jacobian(&self, tau: f64, x: &SVector<f64, N>) -> SMatrix<f64, N, N> {
        self.jacobian_at(&self.point(tau), x)
    }
    /// Whether a state is one the model's law keeps to (e.g. positive pressures under the
    /// cavitation law, [`crate::cavitation`]); a step that ends outside is redone with
    /// [`backward_euler`]. Default: every state.
    fn admissible(&self, _x: &SVector<f64, N>) -> bool {
        true
    }
    /// Whether a failed step (Newton) may be redone with [`backward_euler`] (a law with a
    /// floor is on). Default: no, failures are errors.
    fn rescues(&self) -> bool {
        false
    }
}

/// Integration method (FMU enumeration `Integrator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Forward Euler, order 1, stable for h|λ| ≤ 2 (real λ).
    ForwardEuler = 1,
    /// Trapezoidal rule, order 2, A-stable; Newton iterations with the analytic Jacobian.
    Trapezoidal = 2,
    /// Classical Runge-Kutta, order 4, stable for h|λ| ≤ 2.785 (real λ).
    Rk4 = 3,
}

impl Method {
    /// From the enumeration value.
    pub fn from_i32(v: i32) -> Option<Self> {
        match v {
            1 => Some(Self::ForwardEuler),
            2 => Some(Self::Trapezoidal),
            3 => Some(Self::Rk4),
            _ => None,
        }
    }

    /// Largest h|λ| on the negative real axis for which the method is stable (∞: A-stable).
    pub fn stability_bound(self) -> f64 {
        match self {
            Self::ForwardEuler => 2.0,
            Self::Trapezoidal => f64::INFINITY,
            Self::Rk4 => 2.785_293_563_405_282,
        }
    }

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Self::ForwardEuler => "FWE",
            Self::Trapezoidal => "TR",
            Self::Rk4 => "RK4",
        }
    }
}

/// Newton settings of the trapezoidal rule.
#[derive(Debug, Clone, Copy)]
pub struct Newton {
    /// Converged when every |Δx_i| ≤ `abs_tol` + `rel_tol`·|x_i| (default 1e-6, 1e-10).
    pub abs_tol: f64,
    /// Relative tolerance (default 1e-10).
    pub rel_tol: f64,
    /// Iteration cap (default 20).
    pub max_iter: u32,
}

impl Default for Newton {
    fn default() -> Self {
        Self { abs_tol: 1e-6, rel_tol: 1e-10, max_iter: 20 }
    }
}

/// Why a step failed.
#[derive(Debug, Clone, PartialEq)]
pub enum StepError {
    /// Newton did not converge.
    Newton {
        /// Iterations done.
        iterations: u32,
        /// Last correction norm (max-norm).
        correction: f64,
    },
    /// Singular Newton matrix.
    Singular,
    /// The state became NaN or infinite.
    NotFinite,
}

/// One step from x at τ0 to τ0 + h; returns the Newton iterations (0 for explicit methods).
pub fn step<const N: usize, O: Ode<N>>(
    ode: &O,
    method: Method,
    x: &mut SVector<f64, N>,
    tau0: f64,
    h: f64,
    newton: &Newton,
) -> Result<u32, StepError> {
    let iterations = match method {
        Method::ForwardEuler => {
            *x += ode.f(tau0, x) * h;
            0
        }
        Method::Rk4 => {
            let k1 = ode.f(tau0, x);
            let k2 = ode.f(tau0 + 0.5 * h, &(*x + k1 * (0.5 * h)));
            let k3 = ode.f(tau0 + 0.5 * h, &(*x + k2 * (0.5 * h)));
            let k4 = ode.f(tau0 + h, &(*x + k3 * h));
            *x += (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (h / 6.0);
            0
        }
        Method::Trapezoidal => trapezoidal(ode, x, &ode.f(tau0, x), &ode.point(tau0 + h), h, newton)?.0,
    };
    if x.iter().all(|v| v.is_finite()) {
        Ok(iterations)
    } else {
        Err(StepError::NotFinite)
    }
}

/// One backward-Euler step x_{n+1} = x_n + h f(τ0 + h, x_{n+1}) (order 1, L-stable), Newton
/// with the analytic Jacobian, each correction damped (halved until the iterate is
/// [`Ode::admissible`]) so that it never leaves the states the law keeps to. Used to redo an
/// internal step whose result left them (the entry into cavitation, [`crate::cavitation`]): for
/// a rate f_i = β_e(p_i) r_i with β_e(0) = 0 and β_e increasing, the solution keeps p_i > 0
/// where an explicit stage or the trapezoidal rule's explicit half overshoots below zero.
/// Returns the Newton iterations.
pub fn backward_euler<const N: usize, O: Ode<N>>(
    ode: &O,
    x: &mut SVector<f64, N>,
    tau0: f64,
    h: f64,
    newton: &Newton,
) -> Result<u32, StepError> {
    let p1 = ode.point(tau0 + h);
    let x0 = *x;
    let residual = |y: &SVector<f64, N>| y - x0 - ode.f_at(&p1, y) * h;
    let mut y = x0;
    let mut r = residual(&y);
    let mut correction = f64::INFINITY;
    let max_iter = newton.max_iter.max(100);
    for it in 1..=max_iter {
        let m = SMatrix::<f64, N, N>::identity() - ode.jacobian_at(&p1, &y) * h;
        let dx = solve(m, r).ok_or(StepError::Singular)?;
        // Damped Newton: halve the correction until the iterate is admissible and the residual
        // norm decreases (Armijo); the law's steep collapse makes a full step overshoot.
        let norm = r.norm();
        let mut lambda = 1.0;
        let mut accepted = None;
        for _ in 0..60 {
            let next = y - dx * lambda;
            if ode.admissible(&next) && next.iter().all(|v| v.is_finite()) {
                let r_next = residual(&next);
                if r_next.norm() <= (1.0 - 1e-4 * lambda) * norm || (dx * lambda).amax() <= newton.abs_tol {
                    accepted = Some((next, r_next));
                    break;
                }
            }
            lambda *= 0.5;
        }
        let Some((next, r_next)) = accepted else {
            return Err(StepError::Newton { iterations: it, correction });
        };
        correction = (next - y).amax();
        y = next;
        r = r_next;
        let converged =
            (dx * lambda).iter().zip(y.iter()).all(|(d, yi)| d.abs() <= newton.abs_tol + newton.rel_tol * yi.abs());
        if converged {
            *x = y;
            return Ok(it);
        }
    }
    Err(StepError::Newton { iterations: max_iter, correction })
}

/// [`backward_euler`] over h, split into 2, 4, … 64 equal steps when Newton does not converge.
pub fn backward_euler_split<const N: usize, O: Ode<N>>(
    ode: &O,
    x: &mut SVector<f64, N>,
    tau0: f64,
    h: f64,
    newton: &Newton,
) -> Result<u32, StepError> {
    let start = *x;
    let mut last = StepError::Singular;
    for k in 0..7 {
        let n = 1u32 << k;
        let dt = h / f64::from(n);
        let mut y = start;
        let mut total = 0;
        let mut ok = true;
        for i in 0..n {
            match backward_euler(ode, &mut y, tau0 + f64::from(i) * dt, dt, newton) {
                Ok(it) => total += it,
                Err(e) => {
                    last = e;
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            *x = y;
            return Ok(total);
        }
    }
    Err(last)
}

/// One trapezoidal step from x (with its rate `f0` = f(τ0, x)) to the prepared point `p1`, h
/// later; returns the Newton iterations and the rate at the new state by the trapezoidal
/// relation itself, f_{n+1} = (2/h)(x_{n+1} − x_n) − f_n. The state is not checked for
/// finiteness (the caller does).
///
/// r(y) = y − x − h/2 (f(τ0, x) + f(τ0 + h, y)) = 0. Simplified Newton first: the matrix
/// I − h/2 ∂f/∂y is evaluated and factored once per step (at x_n) and reused; when that
/// contracts too slowly, full Newton with a fresh Jacobian every iteration. The inputs at τ0 + h
/// (`p1`) are evaluated once for all iterations.
///
/// The returned rate differs from f(τ0 + h, x_{n+1}) by 2r/h, r the residual left by the last
/// correction (≈ (h/2)(J(x_n) − J(x_{n+1})) Δx, far below the Newton tolerance), and the error
/// does not accumulate: whatever f_n was used, f_{n+1} = f(x_{n+1}) + 2r_{n+1}/h. So the next
/// step can start from it instead of evaluating f again (one evaluation of ~3 saved per step).
pub fn trapezoidal<const N: usize, O: Ode<N>>(
    ode: &O,
    x: &mut SVector<f64, N>,
    f0: &SVector<f64, N>,
    p1: &O::Point,
    h: f64,
    newton: &Newton,
) -> Result<(u32, SVector<f64, N>), StepError> {
    trapezoidal_chord(ode, x, f0, p1, h, newton, &mut None)
}

/// [`trapezoidal`] with the simplified-Newton matrix `chord` carried over from the previous
/// internal step: when it is `Some`, it is used as is (no Jacobian, no factorization); if it
/// contracts too slowly (θ > 1/10) or not within the chord iterations it is evaluated afresh at
/// x_n and the step restarts, and only a fresh matrix that fails leads to full Newton. On
/// return `chord` holds the matrix used last. The converged state satisfies the same tolerance,
/// so the result differs from [`trapezoidal`]'s by less than the Newton tolerance.
pub fn trapezoidal_chord<const N: usize, O: Ode<N>>(
    ode: &O,
    x: &mut SVector<f64, N>,
    f0: &SVector<f64, N>,
    p1: &O::Point,
    h: f64,
    newton: &Newton,
    chord: &mut Option<Lu<N>>,
) -> Result<(u32, SVector<f64, N>), StepError> {
    let base = *x + f0 * (0.5 * h);
    let converged = |dx: &SVector<f64, N>, y: &SVector<f64, N>| {
        dx.iter().zip(y.iter()).all(|(d, yi)| d.abs() <= newton.abs_tol + newton.rel_tol * yi.abs())
    };
    let chord_iterations = newton.max_iter.min(8);
    let mut spent = 0;
    let mut correction;
    // Start from x_n: an explicit predictor overshoots badly when h|λ| ≫ 1.
    let mut y = *x;
    loop {
        // The matrix stays in `chord` and is used in place (moving it out and back copied it
        // twice per step).
        let fresh = chord.is_none();
        let mut f_start = None;
        let lu: &Lu<N> = match chord {
            Some(lu) => lu,
            None => {
                let (f, jacobian) = ode.f_and_jacobian_at(p1, &y);
                f_start = Some(f);
                let m = SMatrix::<f64, N, N>::identity() - jacobian * (0.5 * h);
                chord.insert(Lu::factor(m).ok_or(StepError::Singular)?)
            }
        };
        // A fresh matrix may contract as slowly as 1/4 per iteration, a reused one 1/10.
        let slow = if fresh { 0.25 } else { 0.1 };
        correction = f64::INFINITY;
        let mut done = None;
        let mut tried = 0;
        for it in 1..=chord_iterations {
            tried = it;
            let f = f_start.take().unwrap_or_else(|| ode.f_at(p1, &y));
            let r = y - base - f * (0.5 * h);
            let dx = lu.apply_inverse(&r);
            y -= dx;
            let c = dx.amax();
            if converged(&dx, &y) {
                done = Some(it);
                break;
            }
            if it > 1 && c > slow * correction {
                break;
            }
            correction = c;
        }
        if let Some(it) = done {
            *x = y;
            return Ok((spent + it, (y - base) * (2.0 / h)));
        }
        spent += tried;
        y = *x;
        if fresh {
            break;
        }
        // The reused matrix is stale: evaluate it at x_n and start over.
        *chord = None;
    }
    // Contraction too slow (or diverging) even with a fresh matrix: full Newton from x_n.
    for it in 1..=newton.max_iter {
        let r = y - base - ode.f_at(p1, &y) * (0.5 * h);
        let m = SMatrix::<f64, N, N>::identity() - ode.jacobian_at(p1, &y) * (0.5 * h);
        let dx = solve(m, r).ok_or(StepError::Singular)?;
        y -= dx;
        correction = dx.amax();
        if converged(&dx, &y) {
            *x = y;
            return Ok((spent + it, (y - base) * (2.0 / h)));
        }
    }
    Err(StepError::Newton { iterations: newton.max_iter, correction })
}

/// LU factorization with partial pivoting of a small matrix, for repeated solves, and the
/// inverse it gives.
pub struct Lu<const N: usize> {
    lu: SMatrix<f64, N, N>,
    perm: [usize; N],
    /// 1/u_kk: the solves multiply instead of dividing (a chain of N divisions is the slowest
    /// part of a back substitution; a simplified-Newton matrix is solved many times).
    inv_diag: [f64; N],
    /// A⁻¹, column k the solution for the unit vector e_k. The simplified-Newton matrix of the
    /// trapezoidal rule is kept for many iterations over several steps; its correction
    /// A⁻¹ r is then N independent dot products instead of the forward and back substitution's
    /// chain of 2N dependent steps, which every Newton iteration waits for. It differs from
    /// [`solve`](Self::solve) by round-off.
    inverse: SMatrix<f64, N, N>,
}

impl<const N: usize> Lu<N> {
    /// Factors `m`; None when singular.
    pub fn factor(mut m: SMatrix<f64, N, N>) -> Option<Self> {
        let mut perm = [0usize; N];
        let mut inv_diag = [0.0; N];
        for (i, p) in perm.iter_mut().enumerate() {
            *p = i;
        }
        for k in 0..N {
            // The first row of largest |m_ik| (plain loops: N is small and known, they unroll).
            let (mut p, mut pivot) = (k, 0.0);
            for i in k..N {
                let v = m[(i, k)].abs();
                if v > pivot {
                    (p, pivot) = (i, v);
                }
            }
            if !(pivot > 0.0 && pivot.is_finite()) {
                return None;
            }
            m.swap_rows(k, p);
            perm.swap(k, p);
            inv_diag[k] = 1.0 / m[(k, k)];
            for i in k + 1..N {
                let f = m[(i, k)] * inv_diag[k];
                m[(i, k)] = f;
                for j in k + 1..N {
                    m[(i, j)] -= f * m[(k, j)];
                }
            }
        }
        let mut lu = Self { lu: m, perm, inv_diag, inverse: SMatrix::<f64, N, N>::zeros() };
        for k in 0..N {
            let column = lu.solve(SVector::<f64, N>::from_fn(|i, _| if i == k { 1.0 } else { 0.0 }));
            lu.inverse.set_column(k, &column);
        }
        Some(lu)
    }

    /// A⁻¹ r: the solution of A x = r to round-off (see the field `inverse`).
    #[inline]
    pub fn apply_inverse(&self, r: &SVector<f64, N>) -> SVector<f64, N> {
        self.inverse * r
    }

    /// Solves the factored system for `r`.
    pub fn solve(&self, r: SVector<f64, N>) -> SVector<f64, N> {
        let mut y = SVector::<f64, N>::zeros();
        for i in 0..N {
            // Σ_j l_ij y_j summed left to right from −0, as `Iterator::sum` does.
            let mut s = -0.0;
            for j in 0..i {
                s += self.lu[(i, j)] * y[j];
            }
            y[i] = r[self.perm[i]] - s;
        }
        for i in (0..N).rev() {
            let mut s = -0.0;
            for j in i + 1..N {
                s += self.lu[(i, j)] * y[j];
            }
            y[i] = (y[i] - s) * self.inv_diag[i];
        }
        y
    }
}

/// Solves m·y = r by Gaussian elimination with partial pivoting (N ≤ 4 here: no allocation).
pub fn solve<const N: usize>(mut m: SMatrix<f64, N, N>, mut r: SVector<f64, N>) -> Option<SVector<f64, N>> {
    for k in 0..N {
        let (p, pivot) = (k..N).map(|i| (i, m[(i, k)].abs())).fold((k, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        if !(pivot > 0.0 && pivot.is_finite()) {
            return None;
        }
        m.swap_rows(k, p);
        r.swap_rows(k, p);
        for i in k + 1..N {
            let f = m[(i, k)] / m[(k, k)];
            for j in k..N {
                m[(i, j)] -= f * m[(k, j)];
            }
            r[i] -= f * r[k];
        }
    }
    for k in (0..N).rev() {
        let s: f64 = (k + 1..N).map(|j| m[(k, j)] * r[j]).sum();
        r[k] = (r[k] - s) / m[(k, k)];
    }
    Some(r)
}

/// Iteration cap of the Schur decomposition. It converges in a few dozen iterations; without a
/// cap (`DMatrix::complex_eigenvalues` has none) a matrix whose iteration overflows to NaN,
/// e.g. from finite but huge parameters, loops forever (found by `fmu-harness/tests/fuzz_c_api_hydraulics.rs`).
const SCHUR_MAX_ITERATIONS: usize = 10_000;

/// Largest |λ| of the Jacobian at (τ, x): the stiffest mode (complex eigenvalues by nalgebra's
/// Schur decomposition on a dynamic copy; called once per communication step). Infinite when the
/// Jacobian is not finite or the decomposition does not converge.
pub fn stiffest_eigenvalue<const N: usize, O: Ode<N>>(ode: &O, tau: f64, x: &SVector<f64, N>) -> f64 {
    let j = ode.jacobian(tau, x);
    let d = nalgebra::DMatrix::from_fn(N, N, |r, c| j[(r, c)]);
    if !d.iter().all(|v| v.is_finite()) {
        return f64::INFINITY;
    }
    match nalgebra::Schur::try_new(d, f64::EPSILON, SCHUR_MAX_ITERATIONS) {
        Some(schur) => schur.complex_eigenvalues().iter().map(|l| l.norm()).fold(0.0, f64::max),
        None => f64::INFINITY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ẋ = λ (x − sin τ) + cos τ: solution x = sin τ + (x0 − 0) e^{λ τ}.
    struct Prothero(f64);
    impl Ode<1> for Prothero {
        type Point = f64;
        fn point(&self, tau: f64) -> f64 {
            tau
        }
        fn f_at(&self, t: &f64, x: &SVector<f64, 1>) -> SVector<f64, 1> {
            SVector::<f64, 1>::new(self.0 * (x[0] - t.sin()) + t.cos())
        }
        fn jacobian_at(&self, _t: &f64, _x: &SVector<f64, 1>) -> SMatrix<f64, 1, 1> {
            SMatrix::<f64, 1, 1>::new(self.0)
        }
    }

    fn error(method: Method, h: f64) -> f64 {
        let ode = Prothero(-2.0);
        let mut x = SVector::<f64, 1>::new(1.0);
        let n = (1.0 / h).round() as usize;
        for i in 0..n {
            step(&ode, method, &mut x, i as f64 * h, h, &Newton::default()).unwrap();
        }
        (x[0] - (1.0f64.sin() + (-2.0f64).exp())).abs()
    }

    #[test]
    fn solve_matches_a_known_system() {
        let m = SMatrix::<f64, 3, 3>::new(0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0);
        let y = SVector::<f64, 3>::new(1.0, -2.0, 0.5);
        let x = solve(m, m * y).unwrap();
        assert!((x - y).amax() < 1e-14);
        assert!(solve(SMatrix::<f64, 2, 2>::zeros(), SVector::<f64, 2>::zeros()).is_none());
        let lu = Lu::factor(m).unwrap();
        assert!((lu.solve(m * y) - y).amax() < 1e-14);
        assert!((lu.apply_inverse(&(m * y)) - y).amax() < 1e-14);
    }

    #[test]
    fn observed_orders_are_1_2_4() {
        for (m, p) in [(Method::ForwardEuler, 1.0), (Method::Trapezoidal, 2.0), (Method::Rk4, 4.0)] {
            let order = (error(m, 0.02) / error(m, 0.01)).log2();
            assert!((order - p).abs() < 0.1, "{m:?}: order {order}");
        }
    }

    /// ẋ = −k x³ + sin τ: nonlinear, so a carried chord matrix goes stale as x moves.
    struct Cubic(f64);
    impl Ode<1> for Cubic {
        type Point = f64;
        fn point(&self, tau: f64) -> f64 {
            tau
        }
        fn f_at(&self, t: &f64, x: &SVector<f64, 1>) -> SVector<f64, 1> {
            SVector::<f64, 1>::new(-self.0 * x[0].powi(3) + t.sin())
        }
        fn jacobian_at(&self, _t: &f64, x: &SVector<f64, 1>) -> SMatrix<f64, 1, 1> {
            SMatrix::<f64, 1, 1>::new(-3.0 * self.0 * x[0] * x[0])
        }
    }

    #[test]
    fn a_carried_chord_matrix_converges_to_the_same_steps() {
        let ode = Cubic(50.0);
        let newton = Newton { abs_tol: 1e-12, ..Newton::default() };
        let h = 1e-3;
        let (mut a, mut b) = (SVector::<f64, 1>::new(2.0), SVector::<f64, 1>::new(2.0));
        let (mut fa, mut fb) = (ode.f(0.0, &a), ode.f(0.0, &b));
        let mut chord = None;
        let (mut fresh_iterations, mut carried_iterations) = (0, 0);
        for i in 0..500 {
            let p1 = ode.point((i + 1) as f64 * h);
            let (ia, f1a) = trapezoidal(&ode, &mut a, &fa, &p1, h, &newton).unwrap();
            let (ib, f1b) = trapezoidal_chord(&ode, &mut b, &fb, &p1, h, &newton, &mut chord).unwrap();
            (fa, fb) = (f1a, f1b);
            fresh_iterations += ia;
            carried_iterations += ib;
            assert!((a[0] - b[0]).abs() < 1e-10, "step {i}: {} vs {}", a[0], b[0]);
        }
        // From x = 2 the state falls fast: the carried matrix is refreshed when it goes stale.
        assert!(carried_iterations < 3 * fresh_iterations, "{carried_iterations} vs {fresh_iterations}");
    }

    #[test]
    fn trapezoidal_is_stable_where_euler_is_not() {
        let ode = Prothero(-1e5);
        // Start on the smooth solution (TR is A- but not L-stable: a transient would ring).
        let (mut a, mut b) = (SVector::<f64, 1>::new(0.0), SVector::<f64, 1>::new(1e-9));
        for i in 0..100 {
            let t = i as f64 * 1e-3;
            step(&ode, Method::Trapezoidal, &mut a, t, 1e-3, &Newton::default()).unwrap();
            let _ = step(&ode, Method::ForwardEuler, &mut b, t, 1e-3, &Newton::default());
        }
        assert!((a[0] - 0.1f64.sin()).abs() < 1e-3);
        assert!(b[0].is_nan() || b[0].abs() >= 1e3);
        assert!((stiffest_eigenvalue(&ode, 0.0, &a) - 1e5).abs() < 1e-6);
    }
}
