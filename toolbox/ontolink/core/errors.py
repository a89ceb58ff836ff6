"""User-facing errors: the only exceptions the CLI turns into one-line messages."""


class OntolinkError(Exception):
    """A failure that is not the input's fault (exit status 1)."""

    exit_code = 1


class InputError(OntolinkError):
    """Bad input data: a malformed line, file or artifact (exit status 2).

    Messages start with ``FILE:LINE:`` (or ``FILE:`` for whole-file problems),
    as docs/records.md describes.
    """

    exit_code = 2

    def __init__(self, message, path=None, line=None):
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)
        self.path = path
        self.line = line
