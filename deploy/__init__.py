"""Robot-side reference: run an exported policy from policy.yaml + policy.onnx only, and sim-to-sim checks.

Nothing in this package imports torch or the training code (config, env, model,
rl, utils): it is what a program on the robot does, written against the export
format alone, so that it can be read as the specification of that format.
"""
