"""A pythonfmu3 FMI 3.0 Co-Simulation FMU for the tests (python/tests/test_fmi3_modes.py, built at
test time with `pythonfmu3 build`): x' = A x + B u, y = C x with A = diag(-1, -2), B = 1, C = [1, 1],
each step the exact solution over h: x_i(t + h) = u/k_i + (x_i(t) - u/k_i) e^{-k_i h}."""

import math

from pythonfmu3 import Fmi3Causality, Fmi3Slave, Fmi3Variability, Float64


class StateSpace2(Fmi3Slave):
    author = "cosim tests"
    description = "x' = diag(-1, -2) x + u, y = x1 + x2"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.time = 0.0
        self.u = 1.0
        self.x1 = 0.0
        self.x2 = 0.0
        self.y = 0.0
        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        self.register_variable(Float64("u", causality=Fmi3Causality.input, start=1.0))
        self.register_variable(Float64("x1", causality=Fmi3Causality.output))
        self.register_variable(Float64("x2", causality=Fmi3Causality.output))
        self.register_variable(Float64("y", causality=Fmi3Causality.output))

    def do_step(self, current_time, step_size):
        for name, k in (("x1", 1.0), ("x2", 2.0)):
            x = getattr(self, name)
            setattr(self, name, self.u / k + (x - self.u / k) * math.exp(-k * step_size))
        self.y = self.x1 + self.x2
        self.time = current_time + step_size
        return True
