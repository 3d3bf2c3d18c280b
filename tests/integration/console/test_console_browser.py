"""The console in a real browser (Debian's chromium, driven by Playwright) against a real
worker on the real broker: a person's profile, a deletion gone from the block, a review
request resolved once, context use, an experiment's arms, and the refusals.

Screenshots go to a temporary directory; ``TURNSTREAM_SCREENSHOTS=docs/console`` (a path
from the repository's root, or absolute) writes them where docs/console.md shows them."""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from turnstream.core.access import Role
from turnstream.entrypoints.http.access import OPEN, ROUTES
from turnstream_dev.deployment import Deployment, new_deployment
from turnstream_dev.sample import sample_day

pytestmark = pytest.mark.integration

CHROMIUM = Path("/usr/bin/chromium")
#: As the machine's closed network needs: nothing reaches out, nothing is fetched.
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "turnstream" / "entrypoints" / "http" / "console.html"
MEASUREMENT = ROOT / "examples" / "measurement.toml"
EXPERIMENT = "acme-block-elements-2026"
DAY = (datetime.now(UTC) - timedelta(days=1)).date()
WHO = "p_zoe"
#: The person corrected in the browser.
OTHER = "p_yan"
#: The person opted out in the browser.
THIRD = "p_uma"

EXTRA = f"""
[signals]
quiet_seconds = 1.0
oldest_pending_seconds = 3.0
[jobs]
measurement = "{MEASUREMENT}"
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


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go: ``TURNSTREAM_SCREENSHOTS`` if set, else a temporary
    directory (a test run leaves the committed ones alone)."""
    asked = os.environ.get("TURNSTREAM_SCREENSHOTS")
    return ROOT / asked if asked else tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def page(browser: Any, worker: Deployment, shots: Path) -> Iterator[Any]:
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
    opened.dialogs_seen, opened.prompt_answers, opened.shots = seen, answers, shots
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
    page.shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(page.shots / f"{name}.png"), full_page=True)


def _console_routes() -> set[tuple[str, str]]:
    """Every ``(method, route template)`` the page's script calls, read from the page: each
    call goes through its one ``api()``, the one place that fetches."""
    script = PAGE.read_text(encoding="utf-8")
    assert script.count("fetch(") == 1 and "XMLHttpRequest" not in script
    assert "EventSource" not in script and "WebSocket" not in script
    calls = re.findall(r'\bapi\(\s*"([A-Z]+)",\s*[`"]([^`"]+)[`"]', script)
    assert len(calls) == script.count(" api(") - script.count("function api("), calls
    shape = {(m, re.sub(r"\{[^}]+\}", "{}", path)): (m, path) for m, path in ROUTES}
    found = set()
    for method, path in calls:
        bare = re.sub(r"\$\{[^}]*\}", "{}", path).split("?")[0]
        assert (method, bare) in shape, f"the console calls {method} {path}: no such route"
        found.add(shape[method, bare])
    return found


def _call(base: str, method: str, path: str, key: str | None) -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    body = b'{"space_id": "acme"}' if method == "POST" else None
    request = urllib.request.Request(base + path, body, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_no_route_of_the_console_answers_without_a_key(worker: Deployment) -> None:
    """The shell is open and holds no data; every route its script calls, named with this
    space's real person and experiment, answers 401 without a key or with a made-up one."""
    base = f"http://127.0.0.1:{worker.worker.web_port}"
    with urllib.request.urlopen(f"{base}/console", timeout=30) as response:
        html = response.read().decode()
        policy = response.headers["Content-Security-Policy"]
    assert WHO not in html and EXPERIMENT not in html and "tsk_" not in html
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    routes = _console_routes()
    # Every page's calls: profile (5), review requests (2), context use, experiments (2).
    assert len(routes) == 10, routes
    names = {"profile_id": WHO, "experiment_id": EXPERIMENT, "inference_id": "inf_1",
             "request_id": "rr_1"}  # fmt: skip
    for method, template in sorted(routes):
        assert ROUTES[method, template] is not OPEN, template
        path = re.sub(r"\{([^}]+)\}", lambda m: names[m.group(1)], template) + "?space_id=acme"
        for key in (None, "tsk_made_up_0000000000000000000000"):
            status, body = _call(base, method, path, key)
            assert status == 401, (method, path, key, status, body)
            assert WHO not in body and EXPERIMENT not in body


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


def test_the_labels_follow_the_language(page: Any, worker: Deployment) -> None:
    page.goto(page.url.split("#")[0] + "?lang=pt#profile")
    assert page.inner_text("h1") == "console turnstream"
    assert page.get_attribute("html", "lang") == "pt"
    page.goto(page.url.split("?")[0] + "?lang=es#experiments")
    assert page.inner_text("#experiments-form button") == "Listar los experimentos del espacio"


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


def _arms(worker: Deployment, key: str) -> Any:
    """The arms as any client gets them (what the page must show)."""
    url = f"http://127.0.0.1:{worker.worker.web_port}/v1/experiments/{EXPERIMENT}/arms"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def test_an_experiments_arms_with_their_intervals_numbers_and_warnings(
    page: Any, worker: Deployment
) -> None:
    key = worker.new_key("acme", Role.analyst)
    _enter_key(page, key, "acme")
    page.click("a[href='#experiments']")
    page.focus("#experiments-form button")  # by keyboard: list, then the experiment's button
    page.keyboard.press("Enter")
    chosen = f"#experiments-table button[data-experiment='{EXPERIMENT}']"
    page.wait_for_selector(chosen)
    page.focus(chosen)
    page.keyboard.press("Enter")
    page.wait_for_selector("#arms tbody tr", timeout=120_000)
    expected = _arms(worker, key)
    arms = expected["arms"]
    rows = page.eval_on_selector_all(
        "#arms tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert [r[0].split(" ")[0] for r in rows] == [a["name"] for a in arms]
    for row, arm in zip(rows, arms, strict=True):
        assert row[1:5] == [
            str(arm["people"]), str(arm["successes"]), _pct(arm["rate"]),
            f"[{_pct(arm['rate_low'])}, {_pct(arm['rate_high'])}]",
        ], arm  # fmt: skip
    # The charts: each arm's rate a dot on its interval, each other arm's difference too,
    # with the numbers written beside them.
    others = [a for a in arms if a["name"] != expected["baseline"]]
    assert page.locator("#arms-data svg circle.estimate").count() == len(arms) + len(others)
    assert page.locator("#arms-data svg line.interval").count() == len(arms) + len(others)
    beside = page.eval_on_selector_all(
        "#arms-data svg text.figure", "els => els.map(e => e.textContent)"
    )
    for arm in arms:
        drawn = f"{_pct(arm['rate'])} [{_pct(arm['rate_low'])}, {_pct(arm['rate_high'])}]"
        assert drawn in beside, (drawn, beside)
    # The analysis's warnings (the sample day's arms are small), each by its code.
    assert expected["warnings"], "the seeded experiment gives no warning: nothing tested"
    codes = page.eval_on_selector_all("#warnings li", "ls => ls.map(l => l.dataset.code)")
    assert codes == [w["code"] for w in expected["warnings"]]
    assert "small_arm" in codes
    shown = page.inner_text("#warnings")
    assert all(w["message"] in shown for w in expected["warnings"])
    assert page.evaluate("location.href").find("tsk_") == -1
    _shot(page, "experiments")


def test_an_experiment_is_refused_without_a_key_and_hidden_from_another_space(
    page: Any, worker: Deployment
) -> None:
    page.click("a[href='#experiments']")
    page.press("#experiments-form button", "Enter")
    page.wait_for_selector("#alert:not(:empty)")
    page.fill("#experiment-id", EXPERIMENT)
    page.press("#experiment-id", "Enter")
    page.wait_for_selector("#alert:not(:empty)")
    assert page.query_selector("#experiments-table") is None
    assert page.query_selector("#arms") is None
    # Another space's key: acme's list is refused; its own list is empty; acme's
    # experiment by its id answers as one that does not exist.
    _enter_key(page, worker.new_key("lumen", Role.analyst), "acme")
    page.press("#experiments-form button", "Enter")
    page.wait_for_selector("#alert:has-text('403')")
    assert page.query_selector("#experiments-table") is None
    page.fill("#space", "lumen")
    page.press("#experiments-form button", "Enter")
    page.wait_for_selector("p#experiments-table")  # none
    said = {}
    for asked in (EXPERIMENT, "no-such-experiment"):
        page.fill("#experiment-id", asked)
        page.press("#experiment-id", "Enter")
        page.wait_for_selector("#alert:has-text('404')", timeout=60_000)
        said[asked] = page.inner_text("#alert").replace(asked, "ID")
        assert page.query_selector("#arms") is None
    assert said[EXPERIMENT] == said["no-such-experiment"]
    seen = page.inner_text("main")
    assert "control" not in seen and "no_soft_signals" not in seen
