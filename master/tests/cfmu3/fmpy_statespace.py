"""FMPy drives statespace.fmu on its own (cosim-cli/tests/fmi3_structural.rs, the independent
cross-check of cosim's structural parameters): instantiates, sets the structural parameter n
(argv[2]) in configuration mode, takes argv[3] steps of argv[4] s (FMPy's grid) and prints `t,x[1],…,x[n],y` with
repr (shortest round trip) after initialization and after every step. FMPy's simulate_fmu sets
start values in the Instantiated state, never in configuration mode, which the standard requires
for structural parameters: this script calls the FMI functions through FMPy's FMU3Slave instead."""
import sys

from fmpy import extract, read_model_description
from fmpy.fmi3 import FMU3Slave

path, n, steps, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
md = read_model_description(path)
vr = {v.name: v.valueReference for v in md.modelVariables}
fmu = FMU3Slave(guid=md.guid, unzipDirectory=extract(path), modelIdentifier=md.coSimulation.modelIdentifier,
                instanceName='fmpy')
fmu.instantiate()
fmu.enterConfigurationMode()
fmu.setUInt64([vr['n']], [n])
fmu.exitConfigurationMode()
assert fmu.getUInt64([vr['n']]) == [n]
fmu.enterInitializationMode(startTime=0.0, stopTime=steps * h)
fmu.exitInitializationMode()


def row(t):
    x = fmu.getFloat64([vr['x']], nValues=n)
    y = fmu.getFloat64([vr['y']])
    print(','.join(repr(v) for v in [t] + list(x) + list(y)))


# The communication points k h and steps between them, as FMPy's simulate_fmu takes them
# (next_regular_point - time; cosim's grid is the same).
t = 0.0
row(t)
for k in range(steps):
    t_next = (k + 1) * h
    fmu.doStep(t, t_next - t)
    t = t_next
    row(t)
fmu.terminate()
fmu.freeInstance()
