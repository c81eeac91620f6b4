"""GaitMetrics: stepping frequency and gait-clock match from contact sequences worked out by hand."""

import pytest
import torch

from rl.gait_metrics import GaitMetrics

DT = 0.02
WALK = torch.tensor([[0.5, 0.0, 0.0]])


def _alternating(step: int, period: int) -> torch.Tensor:
    """Two feet, each down for the first half of its cycle, the second foot half a cycle later: (1, 2) bool."""
    left = (step % period) < period // 2
    right = ((step + period // 2) % period) < period // 2
    return torch.tensor([[left, right]])


def test_step_frequency_counts_touchdowns_per_foot_per_second():
    m = GaitMetrics(1, 2, DT)
    period = 10  # policy steps: 0.2 s, so 5 touchdowns per foot per second
    for step in range(201):  # 200 counted steps: 4 s, 20 touchdowns per foot
        m.step(_alternating(step, period), None, WALK, torch.tensor([True]))
    s = m.summary()
    assert s["step_frequency_hz"] == pytest.approx(5.0)
    assert s["gait_match"] is None  # no clock given


def test_gait_match_is_one_in_step_with_the_clock_zero_against_it_and_a_half_at_double_speed():
    period = 40
    for contact_period, expected in ((period, 1.0), (None, 0.0), (period // 2, 0.5)):
        m = GaitMetrics(1, 2, DT)
        for step in range(400):
            desired = _alternating(step, period)
            contact = ~desired if contact_period is None else _alternating(step, contact_period)
            m.step(contact, desired, WALK, torch.tensor([True]))
        assert m.summary()["gait_match"] == pytest.approx(expected, abs=0.03)


def test_standing_commands_and_ended_episodes_are_not_counted():
    m = GaitMetrics(2, 2, DT)
    commands = torch.tensor([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]])  # env 0 stands, env 1 walks
    for step in range(100):
        sampled = torch.tensor([True, step < 50])  # env 1's episode ends at step 50
        contact = torch.cat([_alternating(step, 10), _alternating(step, 10)])
        m.step(contact, ~contact, commands, sampled)
    s = m.summary()
    assert s["step_frequency_hz"] == pytest.approx(5.0, rel=0.1)  # env 1's 49 counted steps only
    assert s["gait_match"] == 0.0  # only env 1's walking steps are compared
    assert float(m.walk_time.sum()) == pytest.approx(49 * DT)


def test_no_walking_gives_nulls():
    m = GaitMetrics(1, 2, DT)
    for step in range(10):
        m.step(torch.tensor([[True, True]]), torch.tensor([[True, True]]), torch.zeros(1, 3), torch.tensor([True]))
    assert m.summary() == {"step_frequency_hz": None, "gait_match": None}


def test_contact_flicker_is_not_a_step():
    m = GaitMetrics(1, 1, DT)  # MIN_AIR_S 0.04 s: two policy steps
    pattern = [1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1]  # a 1-step flicker, then swings of 3 and 2 steps
    for c in pattern:
        m.step(torch.tensor([[bool(c)]]), None, WALK, torch.tensor([True]))
    assert float(m.touchdowns.sum()) == 2
