"""pipekit-train-blackjax registers the ``blackjax`` backend through its entry point, and the
registry reports BlackJAX's version for it."""

from importlib import metadata

from pipekit_train import registry


def test_entry_point_names_the_adapter_module() -> None:
    eps = {
        ep.name: ep.value
        for ep in metadata.distribution("pipekit-train-blackjax").entry_points
        if ep.group == "pipekit_train.backends"
    }
    assert eps == {"blackjax": "pipekit_train.adapters.blackjax"}


def test_registry_lists_and_loads_it() -> None:
    names = {b.name: b.distribution for b in registry.installed_backends()}
    assert names["blackjax"] == "pipekit-train-blackjax"
    module = registry.load_backend("blackjax")
    assert callable(module.run) and module.BlackjaxTask.__name__ == "BlackjaxTask"
    assert metadata.version("blackjax").startswith("1.7.")
