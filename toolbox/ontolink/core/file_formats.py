"""File formats as registered families: documents, ontologies and KG triples.

Each kind has one base class (a subclass of ``FileFormat``) and one
``FormatRegistry``, kept beside the code that reads it: ``ontolink.formats``
(documents), ``ontolink.ontology.loaders`` (ontologies) and ``ontolink.formats.triples``
(triples). A format is one module in that package whose class registers itself::

    @DOCUMENT_FORMATS.register("brat")
    class BratFormat(DocumentFormat):
        suffixes = (".ann",)
        def read(self, path, problems): ...

and from then on is guessed from file names, listed in the commands' ``--help``
and accepted by their ``--from`` / ``--format`` options. Other distributions add
formats through ``ontolink.backends`` entry points named ``document-format.NAME``,
``ontology-format.NAME`` or ``triple-format.NAME``.
"""

from pathlib import Path

from typing import TypeVar

from ontolink.core.registry import Registry


class FileFormat:
    """Base of every format: what it is called in help, and the file names it is recognised by."""

    summary: str = ""  # one line: what the format is, for help texts and docs
    # lower-case endings of the file names it is guessed from (a trailing .gz is ignored)
    suffixes: tuple[str, ...] = ()

    @classmethod
    def name_match(cls, name: str) -> int:
        """How well the lower-case file name ``name`` (no .gz) says this format: the length of the
        longest matching suffix, 0 when none matches. The longest match wins a guess."""
        return max((len(suffix) for suffix in cls.suffixes if name.endswith(suffix)), default=0)

    @classmethod
    def sniff(cls, path: str | Path) -> bool:
        """Whether the file at ``path`` is this format, when its name matches several (read a little)."""
        return True


def _plain_name(path: str | Path) -> str:
    name = str(path).lower()
    return name[:-3] if name.endswith(".gz") else name


F = TypeVar("F", bound=FileFormat)


class FormatRegistry(Registry[F]):
    """The formats of one kind: names to classes, plus guessing from a file name and listing the
    formats that can do something (``readers``, ``writers``)."""

    def can(self, name: str, method: str) -> bool:
        """Whether format ``name`` implements ``method`` of the base class (e.g. "read")."""
        cls = self.get(name)
        return getattr(cls, method, None) is not getattr(self.base, method, None)

    def names_that(self, method: str) -> list[str]:
        return [name for name in self.names() if self.can(name, method)]

    def guess(self, path: str | Path | None, method: str | None = None) -> str | None:
        """The name of the format ``path``'s file name says (sniffing the file when several match
        equally well); None when none does. With ``method``, only formats that implement it."""
        if path in (None, "-"):
            return None
        name = _plain_name(path)
        ranked: list[tuple[int, str]] = []
        for format_name in (self.names_that(method) if method else self.names()):
            score = self.get(format_name).name_match(name) or 0
            if score:
                ranked.append((-score, format_name))
        ranked.sort()
        for _, format_name in ranked:
            if len(ranked) == 1 or self.get(format_name).sniff(path):
                return format_name
        return None

    def summaries(self, method: str | None = None) -> list[str]:
        """``name: summary`` lines of the formats (that implement ``method``), for help and docs."""
        return [f"{name}: {self.get(name).summary}" for name in (self.names_that(method) if method else self.names())]
