"""SIGHUP and SIGTERM during cosim's blocking calls (:func:`cosim.simulate`, :func:`cosim.check`,
:func:`cosim.sweep`, :func:`cosim.simulate_fmu`).

Python's default for both is to end the process at once: a closed terminal or SSH session (SIGHUP)
or a ``kill`` (SIGTERM) in the middle of a run left the FMU instances unterminated, their
extraction folders in ``$TMPDIR`` and a ``cosim check`` child running on its own. While such a call
runs, and only where the handler is still Python's default (a handler of the program's own is
left alone), cosim takes these signals as Ctrl-C: the run stops at its next communication point
(the same path as ``KeyboardInterrupt``: instances terminated, a ``cosim check`` child told to
stop, which writes its report and removes its extraction, a sweep's pool stopped), the FMUs are
unloaded (extraction folders removed), and then the process ends by the same signal with the
default handler restored — as Python's default would have ended it, only after the cleanup (exit
status -SIGHUP / -SIGTERM; ``finally`` blocks of the program do not run, as with the default).
"""

from __future__ import annotations

import functools
import os
import signal
import threading

STOPS = (signal.SIGHUP, signal.SIGTERM)


class StopSignal(KeyboardInterrupt):
    """SIGHUP or SIGTERM taken as Ctrl-C inside a blocking call (``signum``: which)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _unload():
    from . import _cosim

    _cosim._fmu_cache_clear()


def stops_cleanly(call):
    """Runs ``call`` with SIGHUP and SIGTERM taken as Ctrl-C (see the module), then ends the
    process by the signal once the call has cleaned up."""

    @functools.wraps(call)
    def wrapper(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            return call(*args, **kwargs)
        owner = os.getpid()

        def handler(signum, frame):
            if os.getpid() != owner:
                # A process forked during the call (a sweep's pool worker): the default, at once.
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)
                return
            raise StopSignal(signum)

        previous = {s: signal.signal(s, handler) for s in STOPS if signal.getsignal(s) == signal.SIG_DFL}
        try:
            return call(*args, **kwargs)
        except StopSignal as e:
            if e.signum not in previous:
                raise
            for s, h in previous.items():
                signal.signal(s, h)
            previous.clear()
            _unload()
            os.kill(os.getpid(), e.signum)
            raise  # only if the signal is blocked
        finally:
            for s, h in previous.items():
                signal.signal(s, h)

    return wrapper
