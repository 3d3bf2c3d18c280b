"""The console in a real browser (Debian's chromium, driven by Playwright) against a real
worker on the real broker: a person's profile, a deletion gone from the block, a review
request resolved once, context use, and the refusals. Screenshots go to docs/console/."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from turnstream.core.access import Role
from turnstream.dev.deployment import Deployment, new_deployment
from turnstream.dev.sample import sample_day

pytestmark = pytest.mark.integration

CHROMIUM = Path("/usr/bin/chromium")
#: As the machine's closed network needs: nothing reaches out, nothing is fetched.
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SHOTS = Path(__file__).resolve().parents[3] / "docs" / "console"
DAY = (datetime.now(UTC) - timedelta(days=1)).date()
WHO = "p_zoe"
#: The person corrected in the browser.
OTHER = "p_yan"
#: The person opted out in the browser.
THIRD = "p_uma"

EXTRA = """
[signals]
quiet_seconds = 1.0
oldest_pending_seconds = 3.0
"""


def _item(who: str, n: int, **fields: Any) -> bytes:
    t0 = datetime.now(UTC) - timedelta(hours=1)
    return json.dumps({
        "space_id": "acme", "idempotency_key": f"{who}-{n}", "profile_id": who,
        "source": "web", "conversation_id": "c1",
        "occurred_at": (t0 + timedelta(minutes=n)).isoformat(), **fields,
    }).encode()  # fmt: skip


def _person(who: str) -> list[bytes]:
    """Two clicks on one item (an interest is inferred) and a stated colour."""
    engaged = {"kind": "engaged", "ref": "item_variant:acme:7", "action": "click"}
    stated = {
        "kind": "preference", "strength": "must", "scope": "persistent", "source": "stated",
        "attr": "item_variant.color", "op": "in", "values": ["black"],
    }  # fmt: skip
    return [
        _item(who, 0, type="interaction", interaction=stated),
        _item(who, 1, type="interaction", interaction=engaged),
        _item(who, 2, type="interaction", interaction=engaged),
    ]


@pytest.fixture(scope="module")
def worker(kafka_broker: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    deployment = new_deployment(kafka_broker, tmp_path_factory.mktemp("console"), extra=EXTRA)
    deployment.worker.start()
    try:
        deployment.publish(
            [*sample_day(DAY, seed=7), *_person(WHO), *_person(OTHER), *_person(THIRD)]
        )
        deployment.drain()
        deployment.drain_signals()
        yield deployment
    finally:
        deployment.worker.stop()


@pytest.fixture(scope="module")
def browser(worker: Deployment) -> Iterator[Any]:
    """After the worker: Playwright's sync API holds an event loop in this thread, and the
    worker's setup runs its own (asyncio.run) to publish."""
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: make browser-deps installs it"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, worker: Deployment) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    seen: list[str] = []
    answers: list[str] = []  # what the prompts are answered, in order

    def answer(dialog: Any) -> None:
        seen.append(dialog.type)
        if dialog.type == "prompt":
            dialog.accept(answers.pop(0))
        else:
            dialog.accept()  # every confirmation: yes

    opened.on("dialog", answer)
    opened.dialogs_seen, opened.prompt_answers = seen, answers
    opened.goto(f"http://127.0.0.1:{worker.worker.web_port}/console")
    yield opened
    context.close()


def _enter_key(page: Any, key: str, space: str) -> None:
    """By keyboard, as a person would: type, then Enter submits."""
    page.focus("#key")
    page.keyboard.type(key)
    page.fill("#space", space)
    page.focus("#key")
    page.keyboard.press("Enter")
    page.wait_for_function("sessionStorage.getItem('turnstream.key') !== null")


def _load(page: Any, who: str = WHO) -> None:
    page.fill("#profile-id", who)
    page.press("#profile-id", "Enter")


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_the_shell_has_no_data_and_every_data_route_wants_a_key(worker: Deployment) -> None:
    base = f"http://127.0.0.1:{worker.worker.web_port}"
    with urllib.request.urlopen(f"{base}/console", timeout=30) as response:
        html = response.read().decode()
        policy = response.headers["Content-Security-Policy"]
    assert WHO not in html and "tsk_" not in html
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    for path in (f"/v1/profiles/{WHO}/inferences?space_id=acme", "/v1/context-use"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}{path}", timeout=30)
        assert refused.value.code == 401


def test_without_a_key_and_with_another_spaces_key_nothing_shows(
    page: Any, worker: Deployment
) -> None:
    _load(page)
    page.wait_for_selector("#alert:not(:empty)")
    assert page.query_selector("#inferences") is None
    _shot(page, "no-key")
    # A key of another space, with every role a person's page needs, asking for acme.
    other = worker.new_key("lumen", Role.security, Role.agent, Role.analyst)
    _enter_key(page, other, "acme")
    assert page.evaluate("location.href").find("tsk_") == -1  # never in the URL
    _load(page)
    page.wait_for_selector("#alert:has-text('403')")
    assert page.query_selector("#inferences") is None
    assert WHO not in page.inner_text("#profile-data")
    _shot(page, "other-space")
    # Its own space, the same person: nobody (the profile is acme's).
    page.fill("#space", "lumen")
    _load(page)
    page.wait_for_selector("#profile-data p#inferences")
    assert page.query_selector("#inferences tr") is None
    page.goto(page.url.split("#")[0] + "#context")
    page.press("#since", "Enter")
    page.wait_for_selector("#context-data h3")
    assert "acme" not in page.inner_text("#context-data")


def test_load_a_person_delete_an_inference_and_it_leaves_the_block(
    page: Any, worker: Deployment
) -> None:
    _enter_key(page, worker.new_key("acme", Role.security, Role.agent), "acme")
    _load(page)
    page.wait_for_selector("#inferences button[data-action=delete]")
    button = page.query_selector("#inferences button[data-action=delete]")
    inference = button.get_attribute("data-id")
    assert inference in page.inner_text("#block-json")
    assert "black" in page.inner_text("#stated")  # the stated colour, not an inference
    assert page.query_selector("#tombstones tr") is None
    _shot(page, "profile")
    button.focus()
    page.keyboard.press("Enter")  # asks for confirmation (accepted), then waits
    page.wait_for_selector("#tombstones td:has-text('deleted')", timeout=60_000)
    assert inference not in page.inner_text("#block-json")
    assert page.query_selector(f"#inferences button[data-id='{inference}']") is None
    _shot(page, "profile-deleted")


def test_a_review_request_is_opened_and_resolved_once(page: Any, worker: Deployment) -> None:
    _enter_key(page, worker.new_key("acme", Role.security), "acme")
    page.click("a[href='#reviews']")
    page.fill("#rv-profile", WHO)
    page.fill("#rv-receipts", "rcpt_1, rcpt_2")
    page.fill("#rv-reason", "why this offer?")
    page.press("#rv-reason", "Enter")
    page.wait_for_selector("#opened td:has-text('open')")
    page.fill("#rs-explanation", "rule_r1")
    page.press("#rs-explanation", "Enter")
    page.wait_for_selector("#opened td:has-text('upheld')")
    _shot(page, "reviews")
    page.select_option("#rs-decision", "overturned")
    page.press("#rs-explanation", "Enter")
    page.wait_for_selector("#alert:has-text('409')")
    assert "upheld" in page.inner_text("#opened")


def test_context_use_draws_bars_with_their_numbers(page: Any, worker: Deployment) -> None:
    _enter_key(page, worker.new_key("acme", Role.analyst), "acme")
    page.goto(page.url.split("#")[0] + "#context")
    page.press("#since", "Enter")
    page.wait_for_selector("#context-data figure svg rect")
    numbers = page.eval_on_selector_all(
        "#context-data svg text:nth-of-type(2n)", "els => els.map(e => e.textContent)"
    )
    assert numbers and all(n.isdigit() for n in numbers)
    _shot(page, "context-use")
    page.click("a[href='#experiments']")
    _shot(page, "experiments")


def test_the_labels_follow_the_language(page: Any, worker: Deployment) -> None:
    page.goto(page.url.split("#")[0] + "?lang=pt#profile")
    assert page.inner_text("h1") == "console turnstream"
    assert page.get_attribute("html", "lang") == "pt"


def test_a_correction_replaces_the_inference_with_a_stated_entry(
    page: Any, worker: Deployment
) -> None:
    _enter_key(page, worker.new_key("acme", Role.security, Role.agent), "acme")
    _load(page, OTHER)
    page.wait_for_selector("#inferences button[data-action=correct]")
    button = page.query_selector("#inferences button[data-action=correct]")
    inference = button.get_attribute("data-id")
    page.prompt_answers.extend(["item_variant.color", "green, amarelo"])
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#tombstones td:has-text('deleted')", timeout=60_000)
    assert page.dialogs_seen == ["prompt", "prompt", "confirm"]
    assert "green, amarelo" in page.inner_text("#stated")
    assert inference not in page.inner_text("#block-json")


def test_hostile_text_is_shown_as_text_and_runs_nothing(page: Any, worker: Deployment) -> None:
    _enter_key(page, worker.new_key("acme", Role.security, Role.agent), "acme")
    hostile = "<img src=x onerror=alert(1)>/../../v1/sql?x=1#"
    _load(page, hostile)
    # Nobody by that id (or the routes' refusal): either way, nothing runs, no image.
    page.wait_for_selector("#profile-data #inferences, #alert:not(:empty)")
    assert page.query_selector("img") is None
    assert "alert" not in page.dialogs_seen
    # A space id that is no space: the routes' 404 is shown, nothing else.
    page.fill("#space", "acme&space_id=lumen")
    _load(page)
    page.wait_for_selector("#alert:not(:empty)")
    assert page.query_selector("#inferences") is None


def test_opting_out_asks_first_and_ends_every_inference(page: Any, worker: Deployment) -> None:
    _enter_key(page, worker.new_key("acme", Role.security, Role.agent), "acme")
    _load(page, THIRD)
    page.wait_for_selector("#inferences button[data-action=delete]")
    assert '"inferred": true' in page.inner_text("#block-json")
    page.focus("#opt-out")
    page.keyboard.press("Enter")
    page.wait_for_selector("#profile-data p#inferences", timeout=60_000)  # none active
    assert page.dialogs_seen == ["confirm"]
    # Retracted, not deleted: the list shows them no more, and the block carries none.
    assert '"inferred": true' not in page.inner_text("#block-json")
    assert "black" in page.inner_text("#stated")  # what the person said stays
