"""The user's own ``configure_optimizers`` returning the docs' dict form — an optimiser and
an ``lr_scheduler`` config (``OneCycleLR``, ``"interval": "step"``, ``"frequency": 1``) —
beside the Trainer-option docs' gradient clipping (``gradient_clip_val``, by norm or with
``gradient_clip_algorithm="value"``) through ``backend_options``: the parameters and the
final learning rate equal ``Trainer(gradient_clip_val=...).fit`` run directly on the same
batches, and the clipping is in effect (an unclipped run ends elsewhere). The refusals
never point at each other: clipping in ``backend_options`` beside the loop's optimiser names
``optimizer_config.clip_norm``; ``optimizer_config`` beside the module's own names
``backend_options={"gradient_clip_val": ...}``, which then trains."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from _direct import assert_same_parameters, direct_fit, ordered_loader
from _lightning_helpers import loop
from _upstream import LitClassifier, digit_images

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError

BATCH, STEPS, SEED = 32, 8, 0


class Scheduled(LitClassifier):
    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=STEPS)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": scheduler, "interval": "step", "frequency": 1},
        }


@pytest.mark.parametrize(
    "clip",
    [{"gradient_clip_val": 0.5}, {"gradient_clip_val": 0.05, "gradient_clip_algorithm": "value"}],
    ids=["norm", "value"],
)
def test_own_optimizer_scheduler_and_clipping_train_like_trainer_fit(clip: dict[str, Any]) -> None:
    train = digit_images(512)
    model = Scheduled()
    _, info = TrainingLoop(
        backend="lightning",
        task=model,
        dataset=torch.utils.data.DataLoader(train, batch_size=BATCH, shuffle=True),
        batch_size=BATCH,
        max_steps=STEPS,
        seed=SEED,
        backend_options={"accelerator": "cpu", **clip},
    ).run()
    reference, unclipped = Scheduled(), Scheduled()
    trainer = direct_fit(
        reference, STEPS, clip, train_dataloaders=ordered_loader(train, BATCH, SEED, STEPS)
    )
    assert_same_parameters(model, reference)
    lr = trainer.optimizers[0].param_groups[0]["lr"]  # the rate after the last step
    assert model.trainer.optimizers[0].param_groups[0]["lr"] == lr
    assert info["final_metrics"]["lr"] > 0
    direct_fit(unclipped, STEPS, train_dataloaders=ordered_loader(train, BATCH, SEED, STEPS))
    with pytest.raises(AssertionError):
        assert_same_parameters(reference, unclipped)


def test_the_two_refusals_point_at_ways_that_work(no_fit: None) -> None:
    """Each names the way that works for its case (the first test follows the second's)."""
    clip = {"accelerator": "cpu", "gradient_clip_val": 0.5}
    with pytest.raises(ConfigError, match=r'"clip_norm": value') as plain:
        loop(backend_options=clip).run()  # a plain nn.Module on the loop's optimiser
    assert plain.value.field == "backend_options.gradient_clip_val"
    with pytest.raises(ConfigError, match=r'backend_options=\{"gradient_clip_val"') as own:
        loop(
            model_op=None,
            task=Scheduled(),
            loss=None,
            optimizer_config={"name": "adam", "lr": 1e-3, "clip_norm": 0.5},
        ).run()
    assert own.value.field == "optimizer_config"
