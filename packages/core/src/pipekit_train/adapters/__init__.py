"""Namespace for backend adapters: each backend distribution adds its own module here."""

__path__ = __import__("pkgutil").extend_path(__path__, __name__)
