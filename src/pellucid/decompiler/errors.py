"""Internal signal that a region of bytecode has no structured form (handled by the fallback)."""


class StructureError(Exception):
    """Raised inside the decompiler when a construct is not recognised; never reaches users."""
