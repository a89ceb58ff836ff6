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


class UsageError(OntolinkError):
    """Options that cannot be used as given (a bad combination, a value out of place), found by the library
    function that uses them (exit status 2). The command line shows it as it shows its own usage errors: the
    command's usage line, then the message naming ``option`` when one is given."""

    exit_code = 2

    def __init__(self, message, option=None):
        super().__init__(message)
        self.option = option
