"""The Lightning README's ``LitAutoEncoder`` (its own ``training_step`` with
``self.log("train_loss")`` and ``configure_optimizers`` returning Adam), fed as the README
feeds it — ``DataLoader(train)`` of a ``random_split``, batch size 1 — trains through the
loop to the parameters ``Trainer.fit`` reaches directly on the same batches, and its logged
``train_loss`` is the loop's metric."""

from __future__ import annotations

from _direct import assert_same_parameters, direct_fit, ordered_loader
from _upstream import LitAutoEncoder, digit_images
from torch.utils import data

from pipekit_train import TrainingLoop

STEPS, SEED = 24, 0


def test_readme_autoencoder_trains_like_trainer_fit() -> None:
    train, val = data.random_split(digit_images(300), [250, 50])
    autoencoder = LitAutoEncoder()
    _, info = TrainingLoop(
        backend="lightning",
        task=autoencoder,
        dataset=data.DataLoader(train),
        val_dataset=data.DataLoader(val),
        batch_size=1,
        max_steps=STEPS,
        seed=SEED,
        backend_options={"accelerator": "cpu"},
    ).run()
    reference = LitAutoEncoder()
    direct_fit(reference, STEPS, train_dataloaders=ordered_loader(train, 1, SEED, STEPS))
    assert_same_parameters(autoencoder, reference)
    final = info["final_metrics"]
    assert final["train_loss"] == final["loss"] and final["val_loss"] > 0
