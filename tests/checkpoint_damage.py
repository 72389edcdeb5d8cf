"""Silent damage to a checkpoint for the store tests: same size, a few bytes inverted.

The kit's own tools (``pipekit_train.testing``), which every backend's contract run uses for
its damaged-step check; the integration tests of the stores damage single steps with them.
"""

from pipekit_train.testing import biggest_data_file, flip_bytes

__all__ = ["biggest_data_file", "flip_bytes"]
