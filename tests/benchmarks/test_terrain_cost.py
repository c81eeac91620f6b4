"""benchmarks/terrain_cost.py: the two scenes it times differ only by the --set change; one line on bad input."""

from __future__ import annotations

import re

from benchmarks.terrain_cost import main




def test_boxes_add_geoms_and_the_ratio_is_printed(capsys, monkeypatch):
    # both scenes small: --set changes only the second, so the base config is shrunk through its own class
    from config import go2_rough
    monkeypatch.setattr(go2_rough.go2_rough.terrain, "num_rows", 2)
    monkeypatch.setattr(go2_rough.go2_rough.terrain, "horizontal_scale", 0.1)
    monkeypatch.setattr(go2_rough.go2_rough.terrain, "rough_cell", 0.1)
    monkeypatch.setattr(go2_rough.go2_rough.terrain, "box_tiles", [])  # the base scene all height field
    assert main(["--config", "go2_rough", "--num_envs", "2", "--steps", "2", "--repeats", "1",
                 "--set", 'terrain.box_tiles=["stairs_up"]']) == 0
    out = capsys.readouterr().out
    geoms = [int(g) for g in re.findall(r"(\d+) geoms", out)]
    assert len(geoms) == 2 and geoms[1] > geoms[0]
    assert re.search(r"changed / config: \d+\.\d\d", out)


def test_a_flat_config_or_no_change_is_refused(capsys):
    assert main(["--config", "go2", "--set", "terrain.num_cols=7"]) == 2
    assert main(["--config", "go2_rough"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "rough-terrain config" in err[0] and "--set" in err[1]
