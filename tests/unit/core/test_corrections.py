"""A correction is stated in the bucket of the inference it corrects."""

from __future__ import annotations

import pytest

from turnstream.core.corrections import CorrectionConflict, correction_for


def test_a_beneficiarys_inference_is_corrected_for_the_beneficiary() -> None:
    assert correction_for(None, "beneficiary:kid") == "beneficiary:kid"
    assert correction_for("beneficiary:kid", "beneficiary:kid") == "beneficiary:kid"


def test_an_unknown_inference_takes_the_given_for_else_self() -> None:
    assert correction_for("gift", None) == "gift"
    assert correction_for(None, None) == "self"


def test_another_bucket_than_the_inferences_is_refused() -> None:
    with pytest.raises(CorrectionConflict, match="beneficiary:kid"):
        correction_for("self", "beneficiary:kid")
