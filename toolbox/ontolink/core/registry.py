"""One registry type for every backend family (encoders, name indexes, LLMs, KG embedders, engines).

A backend is one module in its family's package whose class registers itself::

    @ENCODERS.register("torch")
    class SentenceEncoder(Encoder): ...

The package's modules are imported on the first lookup (their top-level imports
are cheap: torch, faiss and the like are imported inside methods), so
``ontolink --help`` imports no backend at all. Other distributions add backends
through ``ontolink.backends`` entry points named ``FAMILY.NAME`` (for example
``encoder.my-model = "my_package.encoder:MyEncoder"``), imported only when chosen.
"""

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from importlib.metadata import EntryPoint
from typing import Any, Generic, TypeVar, cast

import click

from ontolink.core.errors import InputError

ENTRY_POINT_GROUP = "ontolink.backends"

T = TypeVar("T")
C = TypeVar("C", bound=type)


class Registry(Generic[T]):
    """Names to classes for one backend family.

    ``family`` names it in messages, ``key`` is its entry-point prefix, ``package``
    holds its built-in modules and ``base`` is the class every entry subclasses. The type parameter
    is that base (``Registry[Encoder]``); a registry is declared with it, since ``base`` is often
    abstract and the checker would not take an abstract class for ``type[T]``.
    """

    def __init__(self, family: str, key: str, package: str, base: type) -> None:
        self.family = family
        self.key = key
        self.package = package
        self.base = base
        self.classes: dict[str, type[T]] = {}
        self._entry_points: dict[str, EntryPoint] = {}
        self._discovered = False

    def register(self, name: str) -> Callable[[C], C]:
        """Class decorator: make the class available as ``name``."""
        def decorator(cls: C) -> C:
            if not issubclass(cls, self.base):
                raise TypeError(f"{cls.__name__} must subclass {self.base.__name__} to be a {self.family}")
            known = self.classes.get(name)
            if known is not None and known is not cls:
                raise ValueError(f"{self.family} {name!r} is registered twice ({known.__name__}, {cls.__name__})")
            self.classes[name] = cast("type[T]", cls)  # a subclass of base, checked above
            return cls
        return decorator

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        package = importlib.import_module(self.package)
        for module in pkgutil.iter_modules(package.__path__):
            # a subpackage is a family of its own (formats/triples/ beside the document formats)
            if not module.name.startswith("_") and not module.ispkg:
                importlib.import_module(f"{self.package}.{module.name}")
        from importlib import metadata  # here, not at import: `ontolink --help` reads no entry points

        prefix = f"{self.key}."
        for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
            if entry_point.name.startswith(prefix):
                self._entry_points.setdefault(entry_point.name[len(prefix):], entry_point)

    def names(self) -> list[str]:
        self._discover()
        return sorted(set(self.classes) | set(self._entry_points))

    def get(self, name: str) -> type[T]:
        """The class registered as ``name``; an unknown name is one line listing the known ones."""
        self._discover()
        if name not in self.classes and name in self._entry_points:
            self.register(name)(self._entry_points[name].load())
        try:
            return self.classes[name]
        except KeyError:
            raise InputError(f"unknown {self.family} {name!r} (known: {', '.join(self.names())})") from None

    def name_of(self, cls: type) -> str | None:
        """The name ``cls`` is registered under."""
        self._discover()
        return next((name for name, known in self.classes.items() if known is cls), None)

    def __contains__(self, name: object) -> bool:
        return name in self.names()


class LazyChoice(click.Choice):
    """A click choice whose values ``list_choices()`` gives when help or a value needs them, so that
    building the CLI imports no backend."""

    def __init__(self, list_choices: Callable[[], Sequence[str]]) -> None:
        self.list_choices = list_choices
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]  # click.Choice keeps an attribute
        return tuple(self.list_choices())


def registry_choice(registry: Registry[Any]) -> LazyChoice:
    """The names of ``registry`` as a click choice."""
    return LazyChoice(registry.names)
