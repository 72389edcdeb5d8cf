"""``ema_decay`` on Lightning: an exponential moving average of the module's parameters.

The update is torch's own (``torch.optim.swa_utils.get_ema_multi_avg_fn(d)``: a
``torch._foreach_lerp_`` by ``1 - d``, i.e. ``ema = d * ema + (1 - d) * params``),
applied by the bridge once per *optimiser* step (after the ``accumulate_steps``-th
micro-batch), and the average starts at the initial parameters — the loop's rule, as
on the Equinox and Keras backends (``AveragedModel`` would instead copy the first
update's weights, and its deep copy of the module is not needed). Buffers (batch-norm
statistics) are not averaged: evaluation and the trained op pair the averaged
parameters with the live buffers. The average is saved in the pipekit checkpoint
(``"ema"``, a name → tensor dict) and restored before training resumes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch.optim.swa_utils import get_ema_multi_avg_fn

from pipekit_train.errors import CheckpointError

__all__ = ["WeightEMA"]


class WeightEMA:
    """The averaged parameters of ``net`` (same names, dtypes and device as its own)."""

    def __init__(self, net: torch.nn.Module, decay: float) -> None:
        self.decay = float(decay)
        named = list(net.named_parameters())
        self.names = [name for name, _ in named]
        with torch.no_grad():
            self.params = [p.detach().clone() for _, p in named]
        self._update = get_ema_multi_avg_fn(self.decay)

    def _live(self, net: torch.nn.Module) -> list[torch.Tensor]:
        live: list[torch.Tensor] = [p for _, p in net.named_parameters()]
        if self.params and self.params[0].device != live[0].device:  # fit moved the module
            self.params = [t.to(live[0].device) for t in self.params]
        return live

    def update(self, net: torch.nn.Module) -> None:
        """One EMA step towards ``net``'s current parameters (call after an optimiser step)."""
        live = self._live(net)
        self._update(self.params, [p.detach() for p in live], None)

    def state_dict(self) -> dict[str, torch.Tensor]:
        """Host copies, keyed by parameter name (what the checkpoint stores)."""
        return {n: t.detach().cpu().clone() for n, t in zip(self.names, self.params, strict=True)}

    def load_state_dict(self, state: dict[str, torch.Tensor], where: str) -> None:
        """Put a checkpoint's average back; another model's average is a ``CheckpointError``."""
        if list(state) != self.names or any(
            state[n].shape != t.shape for n, t in zip(self.names, self.params, strict=True)
        ):
            raise CheckpointError(
                f"the EMA weights in {where} do not fit model_op's parameters; use a new "
                'checkpoint_dir or backend_options={"resume": "never"}'
            )
        with torch.no_grad():
            for t, n in zip(self.params, self.names, strict=True):
                t.copy_(state[n].to(device=t.device, dtype=t.dtype))

    def copy_into(self, net: torch.nn.Module) -> None:
        """Overwrite ``net``'s parameters with the average (the trained op's weights)."""
        with torch.no_grad():
            for p, t in zip(self._live(net), self.params, strict=True):
                p.copy_(t)

    @contextlib.contextmanager
    def swapped_into(self, net: torch.nn.Module) -> Iterator[None]:
        """``net`` holds the average inside the block (evaluation), its own weights after."""
        live = self._live(net)
        with torch.no_grad():
            saved = [p.detach().clone() for p in live]
        self.copy_into(net)
        try:
            yield
        finally:
            with torch.no_grad():
                for p, s in zip(live, saved, strict=True):
                    p.copy_(s)
