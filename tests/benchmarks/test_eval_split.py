"""benchmarks/eval_split.py: an eval.json's episodes grouped by the command they held."""

import json

from benchmarks import eval_split
from utils.cli import main_with_one_line_errors


def eval_file(tmp_path, with_zero=True):
    trained = {"per_env": {"command": [[-0.2, 0, 0.0], [0.1, 0, -0.8], [0.5, 0, 0.5], [0.7, 0, 0.9]],
                           "fell": [0.0, 0.0, 1.0, 0.0], "lin_vel_rmse": [0.1, 0.2, 0.5, 0.3],
                           "yaw_rate_rmse": [0.2, 0.4, 0.9, 0.5]}}
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
