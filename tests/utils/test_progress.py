import pytest

from utils.progress import Progress, format_duration


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


@pytest.mark.parametrize("seconds, text", [(0, "0s"), (48.4, "48s"), (59.6, "1m00s"), (708, "11m48s"),
                                           (7500, "2h05m"), (3 * 86400 + 4 * 3600, "3d04h"),
                                           (float("inf"), "?")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_rate_and_eta_with_fake_clock():
    clock = FakeClock()
    p = Progress(total=1500, clock=clock)
    assert p.eta == float("inf")
    clock.t += 12 / 2.1 * 1  # 12 iterations at 2.1 it/s
    line = p.update(12)
    assert p.rate == pytest.approx(2.1)
    assert p.eta == pytest.approx(1488 / 2.1)
    assert line == "[  12/1500]   0.8%  2.1 it/s  ETA 11m49s"


def test_resumed_progress_counts_only_its_own_time():
    clock = FakeClock()
    p = Progress(total=10, initial=6, label="run1", clock=clock)
    clock.t += 2.0
    line = p.update()  # 1 iteration in 2 s -> 0.5 it/s, 3 left -> 6 s
    assert p.count == 7 and p.rate == pytest.approx(0.5) and p.eta == pytest.approx(6.0)
    assert line == "run1 [ 7/10]  70.0%  0.5 it/s  ETA 6s"
    clock.t += 1.0
    p.update(3)
    assert p.eta == 0.0 and p.format().endswith("ETA 0s")
