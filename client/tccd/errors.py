"""The exceptions and the warning category the tccd client raises.

TccdError is what users catch (and what TCCD_STRICT=1 surfaces); the subclasses say whose fault
it was, so the backend can word its fallback reason.
"""


class TccdError(Exception):
    """Compiling a graph through tccd failed (raised instead of falling back when TCCD_STRICT=1)."""


class Unsupported(TccdError):
    """The graph uses something the tccd protocol cannot express (a non-ATen node, ...)."""


class DaemonUnavailable(TccdError):
    """No daemon answers at the configured address and none could be started."""


class CompileFailed(TccdError):
    """The daemon answered a Compile/FetchArtifact call with an error status.

    `code` is the grpc.StatusCode (INVALID_ARGUMENT and UNIMPLEMENTED are the user-fault ones).
    """

    def __init__(self, message: str, code=None):
        super().__init__(message)
        self.code = code


class ArtifactError(TccdError):
    """An artifact or plan from the daemon could not be fetched, verified or loaded."""


class TccdFallbackWarning(UserWarning):
    """A graph runs eagerly because tccd could not compile it; the message says why."""
