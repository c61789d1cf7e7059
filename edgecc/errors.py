"""User-facing errors: one line saying what is wrong and where; the CLI turns them into exit 2.
InternalError (and any other exception) is a bug in edgecc: exit 3 (edgecc/diagnostics.py)."""


class EdgeccError(Exception):
    """A problem with the user's input (model, arguments, board) rather than a bug in edgecc."""


class UnsupportedModel(EdgeccError):
    pass


class UnsupportedNodes(UnsupportedModel):
    """Every unsupported node of a model at once: the line is as long as the list needs (each
    part of it is bounded where it is built), never cut (edgecc/diagnostics.py)."""

    full_line = True


class ModelFormatError(EdgeccError):
    pass


class InternalError(Exception):
    """A bug in edgecc (never the model's fault): the CLI reports it as
    `edgecc: internal error: ... (op N, OPNAME)` with exit status 3."""

    def __init__(self, message: str, op_index: int | None = None, op_name: str | None = None):
        super().__init__(message)
        self.op_index, self.op_name = op_index, op_name
