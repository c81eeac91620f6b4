"""GracefulStop: the first Ctrl-C asks, the second aborts at once, or after the protected write in progress."""

import os
import signal

import pytest

from rl.stop_signal import GracefulStop


def _stop(lines: list[str]) -> GracefulStop:
    return GracefulStop(lines.append, lambda: 7)


def test_first_ctrl_c_only_asks_and_announces_once():
    lines: list[str] = []
    with _stop(lines) as stop:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.requested
    assert len(lines) == 1 and "finishing iteration 7" in lines[0] and "Ctrl-C again" in lines[0]


def test_second_ctrl_c_outside_a_write_aborts_at_once():
    with pytest.raises(KeyboardInterrupt), _stop([]):
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        pytest.fail("the second Ctrl-C did not abort")


def test_second_ctrl_c_inside_a_write_lets_the_write_finish_then_aborts():
    done = []
    with pytest.raises(KeyboardInterrupt), _stop([]) as stop:
        os.kill(os.getpid(), signal.SIGINT)
        with stop.protect():
            with stop.protect():  # nested: the abort waits for the outermost block
                os.kill(os.getpid(), signal.SIGINT)
                os.kill(os.getpid(), signal.SIGINT)  # a third one changes nothing
                done.append("inner")
            done.append("outer")
        pytest.fail("the abort was lost")
    assert done == ["inner", "outer"]


def test_sigterm_twice_never_aborts():
    with _stop([]) as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.requested
