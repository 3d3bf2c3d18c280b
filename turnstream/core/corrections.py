"""Whose a correction is: the bucket (``for``) of the inference it corrects. Pure."""

from __future__ import annotations

__all__ = ["CorrectionConflict", "correction_for"]


class CorrectionConflict(ValueError):
    """The correction names a ``for`` other than the corrected inference's."""


def correction_for(given: str | None, corrected: str | None) -> str:
    """The ``for`` a correction is stated in.

    ``given`` is the replacement's own ``for`` (None when the caller left it out);
    ``corrected`` the bucket of the inference it corrects (None when the store does not
    hold it yet: it may still be in flight). A correction of a beneficiary's inference is
    the beneficiary's, never ``self``'s; one that names another bucket is refused.
    """
    if given is not None and corrected is not None and given != corrected:
        raise CorrectionConflict(
            f"the inference is for {corrected!r}; its correction cannot be for {given!r}"
        )
    return given or corrected or "self"
