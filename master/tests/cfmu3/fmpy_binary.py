"""FMPy drives cfmu3.fmu on its own (cosim-cli/tests/fmi3_cfmu.rs, the independent cross-check of
cosim's Binary path): prints FMPy's reading of the description's Binary start values, then sets
bin_in (hex argv[3]) with fmi3SetBinary in initialization mode, takes argv[2] steps of 0.1 s and
prints `k,bin_in,bin_out` (hex) after initialization and after every step."""
import sys

from fmpy import extract, read_model_description
from fmpy.fmi3 import FMU3Slave

path, steps, hex_in = sys.argv[1], int(sys.argv[2]), sys.argv[3]
md = read_model_description(path)
vr = {v.name: v.valueReference for v in md.modelVariables}
for v in md.modelVariables:
    if v.type == 'Binary' and v.start is not None and not v.dimensions:
        print('start,%s,%s' % (v.name, bytes.fromhex(v.start).hex()))
fmu = FMU3Slave(guid=md.guid, unzipDirectory=extract(path), modelIdentifier=md.coSimulation.modelIdentifier,
                instanceName='fmpy')
fmu.instantiate()
fmu.enterInitializationMode(startTime=0.0, stopTime=1.0)
fmu.setBinary([vr['bin_in']], [bytes.fromhex(hex_in)])
fmu.exitInitializationMode()


def row(k):
    values = fmu.getBinary([vr['bin_in'], vr['bin_out']])
    print('%d,%s,%s' % (k, values[0].hex(), values[1].hex()))


row(0)
for k in range(steps):
    fmu.doStep(k * 0.1, 0.1)
    row(k + 1)
fmu.terminate()
fmu.freeInstance()
