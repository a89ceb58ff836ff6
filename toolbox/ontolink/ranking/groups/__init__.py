"""The ranker's feature groups: one module per group, each a ``FeatureGroup`` registered in ``FEATURE_GROUPS``
(`train ranker --features`). A new feature is one module here plus its test
(tests/components/test_ranker_feature_NAME.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ontolink.core.errors import InputError
from ontolink.ranking.groups.base import FeatureGroup
from ontolink.core.registry import C, Registry


class FeatureGroupRegistry(Registry[FeatureGroup]):
    """A registry whose classes also learn the name they are registered under (a ranker's manifest lists it)."""

    def register(self, name: str) -> Callable[[C], C]:  # C: a FeatureGroup subclass, as the base checks
        add = super().register(name)

        def decorator(cls: C) -> C:
            add(cls)  # checks the base class first
            cls.name = name  # type: ignore[attr-defined]  # C is any class to the checker
            return cls
        return decorator


FEATURE_GROUPS = FeatureGroupRegistry("feature group", "ranker-feature", "ontolink.ranking.groups", FeatureGroup)


def group_names() -> list[str]:
    """Every group's name, in ``position`` order (dense first)."""
    return sorted(FEATURE_GROUPS.names(), key=lambda name: (FEATURE_GROUPS.get(name).position, name))


def default_groups() -> list[str]:
    return [name for name in group_names() if FEATURE_GROUPS.get(name).default]


def encoder_free(groups: Iterable[str]) -> list[str]:
    """The ones of ``groups`` that run no encoder: what a gate ranks on."""
    return [name for name in groups if not FEATURE_GROUPS.get(name).runs_encoder]


def feature_columns(groups: Iterable[str]) -> list[str]:
    return [column for name in groups for column in FEATURE_GROUPS.get(name).columns]


def check_groups(groups: Iterable[str]) -> list[str]:
    """``groups`` as a list, once each known and every required group among them."""
    known = group_names()
    unknown = [name for name in groups if name not in known]
    if unknown:
        raise InputError(f"unknown feature group(s) {', '.join(unknown)} (known: {', '.join(known)})")
    missing = [name for name in known if FEATURE_GROUPS.get(name).required and name not in groups]
    if missing:
        raise InputError(f"the {', '.join(missing)} feature group is required")
    return list(groups)
