"""Go2 on rough terrain with a perceptive policy: it sees the height scan around its base.

The same terrain, rewards and curriculum as go2_rough; the policy observes the critic's
17 x 11 height scan as well (its values: base height above the ground at each point, from
an elevation map on the robot; deploy/height_scan.py computes it by ray casting).
"""

from config.go2_rough import go2_rough


class go2_perceptive(go2_rough):
    class terrain(go2_rough.terrain):
        policy_height_scan = True  # bool, the policy sees the height scan (a perceptive policy)
