"""User-facing errors: one line that names the thing and the fix."""


class PipelineError(Exception):
    """Bad input or setup. Stages print it as a single `error: ...` line and exit 2."""
