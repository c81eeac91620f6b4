"""Go2 on rough terrain with a perceptive policy: it sees the height scan around its base.

The same terrain, rewards and curriculum as go2_rough; the policy observes the critic's
17 x 11 height scan as well (its values: base height above the ground at each point, from
an elevation map on the robot; deploy/height_scan.py computes it by ray casting).

The committed policy (benchmarks/results/go2_perceptive, 175 minutes on 2 cores) is this config
trained in two runs: from the high-stepping flat source for 96 terrain minutes, the checkpoint
chosen on 13 cm validation stairs (iteration 1800), then 25 minutes from it with the learning
rate fixed at 5e-5 (`--set algorithm.schedule=fixed --set algorithm.learning_rate=0.00005`).
At the adaptive rate the 15 cm climb came and went between checkpoints; at the low one it held
(README "Perceptive Go2" has the commands).
"""

from config.go2_rough import go2_rough


class go2_perceptive(go2_rough):
    class terrain(go2_rough.terrain):
        policy_height_scan = True  # bool, the policy sees the height scan (a perceptive policy)

    class noise(go2_rough.noise):
        class noise_scales(go2_rough.noise.noise_scales):
            # Each episode's map reads the ground up to 10 cm higher or lower. From the same blind checkpoint and
            # budget, without it the policy stalled at the top of the 15 cm course stairs (11 of 32 went down) and
            # stopped short of the 10 cm stairs when deploy's map read 10 cm low (1 of 32 climbed); with it 29 and
            # 32 of 32 (docs/rough_terrain_trials.md, "Stop 61").
            height_drift = 0.1  # m
