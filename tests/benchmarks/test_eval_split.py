"""benchmarks/eval_split.py: an eval.json's episodes grouped by the command they held."""

import json

from benchmarks import eval_split
from utils.cli import main_with_one_line_errors


def eval_file(tmp_path, with_zero=True, tiles=False):
    trained = {"per_env": {"command": [[-0.2, 0, 0.0], [0.1, 0, -0.8], [0.5, 0, 0.5], [0.7, 0, 0.9]],
                           "fell": [0.0, 0.0, 1.0, 0.0], "lin_vel_rmse": [0.1, 0.2, 0.5, 0.3],
                           "yaw_rate_rmse": [0.2, 0.4, 0.9, 0.5]}}
    if tiles:  # what play.py writes on a rough-terrain config
        trained["per_env"].update(terrain_type=["flat", "obstacles", "obstacles", "flat"], terrain_level=[0, 1, 5, 7])
    zero = {"per_env": {**trained["per_env"], "fell": [1.0] * 4, "yaw_rate_rmse": [0.1, 0.8, 0.5, 0.9]}}
    path = tmp_path / "eval.json"
    path.write_text(json.dumps({"episodes": 4, "randomize": True, "push": False,
                                "policies": {"trained": trained, **({"zero": zero} if with_zero else {})}}))
    return path


def test_bands_are_half_open_from_each_edge():
    assert eval_split.bands([-0.3, 0.0, 0.3, 0.29, 0.7], [0.0, 0.3]) == [0, 1, 2, 1, 2]


def test_split_by_forward_command_gives_each_band_its_means_and_the_ratio_to_zero_action(tmp_path, capsys):
    path = eval_file(tmp_path)
    rows = eval_split.split(json.loads(path.read_text())["policies"]["trained"], "vx", [0.3])
    assert [r["episodes"] for r in rows] == [2, 2]
    assert abs(rows[0]["yaw_rate_rmse"] - 0.3) < 1e-9 and abs(rows[1]["yaw_rate_rmse"] - 0.7) < 1e-9
    assert rows[0]["fall_rate"] == 0.0 and rows[1]["fall_rate"] == 0.5
    assert eval_split.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "trained  [-inf, 0.3) m/s" in out and "[0.3, inf) m/s" in out
    fast = next(line for line in out.splitlines() if line.strip().startswith("trained  [0.3"))
    assert fast.split()[-1] == "1.00"  # 0.7 / mean(0.5, 0.9)


def test_split_by_yaw_uses_the_absolute_command(tmp_path, capsys):
    assert eval_split.main([str(eval_file(tmp_path, with_zero=False)), "--by", "yaw", "--edges", "0.6"]) == 0
    out = capsys.readouterr().out
    low = next(line for line in out.splitlines() if "[0, 0.6)" in line)
    high = next(line for line in out.splitlines() if "[0.6, inf)" in line)
    assert low.split()[4] == "2" and high.split()[4] == "2"  # |-0.8| is with 0.9, 0.5 with 0.0


def test_split_by_the_level_of_each_episodes_tile_and_on_one_tile_type(tmp_path, capsys):
    policy = json.loads(eval_file(tmp_path, tiles=True).read_text())["policies"]["trained"]
    rows = eval_split.split(policy, "level", [4])
    assert [r["episodes"] for r in rows] == [2, 2] and rows[0]["fall_rate"] == 0.0 and rows[1]["fall_rate"] == 0.5
    on_blocks = eval_split.split(policy, "level", [4], terrain="obstacles")
    assert [r["episodes"] for r in on_blocks] == [1, 1] and on_blocks[1]["yaw_rate_rmse"] == 0.9
    fast_blocks = eval_split.split(policy, "vx", [0.3], terrain="obstacles")
    assert [r["episodes"] for r in fast_blocks] == [1, 1]
    assert eval_split.main([str(tmp_path / "eval.json"), "--by", "level", "--edges", "4", "--terrain", "flat"]) == 0
    out = capsys.readouterr().out
    assert "by level, flat tiles only" in out and "level band" in out
    low = next(line for line in out.splitlines() if line.strip().startswith("trained  [0, 4) level"))
    assert low.split()[4] == "1" and low.split()[-1] == "2.00"  # flat level 0: 0.2 / zero action's 0.1


def test_tiles_asked_of_an_eval_without_them_are_one_line(tmp_path, capsys):
    run = lambda *argv: main_with_one_line_errors(lambda: eval_split.main(list(argv)))  # noqa: E731  as __main__
    assert run(str(eval_file(tmp_path)), "--by", "level") == 2
    assert run(str(eval_file(tmp_path)), "--terrain", "flat") == 2
    assert run(str(eval_file(tmp_path, tiles=True)), "--terrain", "stairs_up") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("error: ") for line in err)
    assert "per_env.terrain_level" in err[0] and "per_env.terrain_type" in err[1]
    assert "no episode on a 'stairs_up' tile; this eval has flat, obstacles" in err[2]


def test_bad_input_is_one_line_and_status_2(tmp_path, capsys):
    run = lambda *argv: main_with_one_line_errors(lambda: eval_split.main(list(argv)))  # noqa: E731  as __main__
    assert run(str(tmp_path / "missing.json")) == 2
    assert run(str(eval_file(tmp_path)), "--edges", "0.5", "0.3") == 2
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"rows": []}))
    assert run(str(other)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("error: ") for line in err)
    assert "must ascend" in err[1] and "not a play.py --eval result" in err[2]


def test_yaw_rmse_splits_into_its_steady_offset_and_the_swing_about_it(tmp_path, capsys):
    """RMSE^2 = offset^2 + sd^2 per episode: a gait that yaws back and forth shows in sd, a slow turn in off."""
    path = eval_file(tmp_path)
    data = json.loads(path.read_text())
    data["policies"]["trained"]["per_env"]["yaw_rate_offset"] = [0.2, 0.0, 0.9, 0.3]  # steady / swing / ... / mixed
    path.write_text(json.dumps(data))
    slow, fast = eval_split.split(data["policies"]["trained"], "vx", [0.3])
    assert abs(slow["yaw_rate_offset"] - 0.1) < 1e-9 and abs(slow["yaw_rate_sd"] - 0.2) < 1e-9  # (0 + 0.4) / 2
    assert abs(fast["yaw_rate_sd"] - 0.2) < 1e-9  # (0 + sqrt(0.5^2 - 0.3^2)) / 2
    assert eval_split.main([str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[-3:] == ["off", "sd", "yaw/zero"]
    assert next(line for line in lines if line.strip().startswith("trained  [-inf")).split()[-3:-1] == ["0.100",
                                                                                                         "0.200"]
    assert next(line for line in lines if line.strip().startswith("zero")).split()[-3:-1] == ["-", "-"]  # no offsets
