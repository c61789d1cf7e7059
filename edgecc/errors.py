"""User-facing errors: one line saying what is wrong and where; the CLI turns them into exit 2."""


class EdgeccError(Exception):
    """A problem with the user's input (model, arguments, board) rather than a bug in edgecc."""


class UnsupportedModel(EdgeccError):
    pass


class ModelFormatError(EdgeccError):
    pass
