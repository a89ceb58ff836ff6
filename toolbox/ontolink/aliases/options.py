"""The options of the aliases commands (select-entities, ...), one typed object per command with each default given
here once: the command line shows these defaults and passes the object to the library function. Cheap to import:
`--help` reads it without loading what the commands run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ontolink.ontology import OntologySource


@dataclass(frozen=True)
class SelectEntitiesOptions:
    """Everything `ontolink select-entities` is asked, each default given here once."""

    ontology: OntologySource
    index_dir: str | None = None  # without it, exact name matches only (E_EM)
    input_path: str = "-"
    skip_invalid: bool = False
    output_path: str = "-"
    device: str = "auto"
    start_engine: Callable[..., Any] | None = None  # opens the engine (cli.options.engine_options); None: here
