"""The friction cone and impratio of `sim` reach the compiled model; a bad impratio is refused in one line."""

import mujoco
import pytest

from config import ConfigError, load_config
from env.sim.scene import load_mj_model


def test_cone_and_impratio_reach_the_model():
    default = load_mj_model(load_config("go2"))
    assert default.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL and default.opt.impratio == pytest.approx(1.0)
    model = load_mj_model(load_config("go2", ["sim.cone=elliptic", "sim.impratio=10"]))
    assert model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC
    assert model.opt.impratio == pytest.approx(10.0)


@pytest.mark.parametrize("value", ["0.5", "-1", "abc"])
def test_impratio_below_one_is_refused(value):
    with pytest.raises(ConfigError) as err:
        load_config("go2", [f"sim.impratio={value}"])
    message = str(err.value)
    assert "sim.impratio" in message and "\n" not in message
