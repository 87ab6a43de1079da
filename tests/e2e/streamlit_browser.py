"""Driving a Streamlit page in a real browser: knowing when a run has finished, and taking a download."""
import re
from pathlib import Path

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

TIMEOUT = 90_000  # ms
FAILED_DOWNLOAD = '[data-testid="stDownloadButtonError"], [data-testid="stAlert"]:has-text("could not be made")'


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'  # Streamlit's own: no script run going on


def settled(page, timeout: int = TIMEOUT) -> None:
    """Until the page's script run has finished (the state Streamlit writes on the app's root) and the browser has
    drawn what it received (two animation frames): the app's own signal, not a fixed time."""
    page.wait_for_selector(IDLE, state="attached", timeout=timeout)
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


def count_runs(page) -> None:
    """page.runs: how many script runs the server has reported finished (Streamlit's script_finished message, one
    per run, a fragment's included). Call before page.goto."""
    page.runs = 0

    def on_frame(payload) -> None:
        if isinstance(payload, bytes) and ForwardMsg.FromString(payload).WhichOneof("type") == "script_finished":
            page.runs += 1

    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))


def wait_runs(page, count: int) -> None:
    """Until the server has finished `count` runs of this page."""
    for _ in range(TIMEOUT // 50):
        if page.runs >= count:
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"{page.runs} runs finished, expected {count}")


def rerun_after(page, click) -> None:
    """click(), then until the rerun it causes (every click of these buttons reruns) has finished."""
    before = page.runs
    click()
    wait_runs(page, before + 1)


def download(page, click, tmp_path: Path) -> Path:
    """The file a click downloads, saved under its suggested name; fails at once if the page says it failed."""
    started = []

    def on_download(d):
        started.append(d)

    page.on("download", on_download)
    try:
        click()
        for _ in range(TIMEOUT // 100):
            if started:
                break
            failed = page.locator(FAILED_DOWNLOAD)
            if failed.count():
                raise AssertionError(f"the download failed; the page says: {failed.first.inner_text()}")
            page.wait_for_timeout(100)
    finally:
        page.remove_listener("download", on_download)
    assert started, f"no download started; the browser's console: {getattr(page, 'console', [])}"
    path = tmp_path / started[0].suggested_filename
    started[0].save_as(path)
    assert started[0].failure() is None
    return path


def step_line(page) -> str:
    """The line a decoding page writes under its step slider: "Step 3. ... writes <word>"."""
    return page.locator("p", has_text=re.compile(r"^Step \d+\.")).first.inner_text()


def next_writes(page, words, first_step: int = 1) -> None:
    """Next clicked once a word: each step in the link, and the line says the word written."""
    for step, word in enumerate(words, start=first_step):
        page.get_by_role("button", name="Next").click()
        page.wait_for_function(f"() => location.search.includes('step={step}')", timeout=TIMEOUT)
        page.wait_for_function(f"() => [...document.querySelectorAll('p')].some(p => /writes {word}$/.test("
                               "p.innerText.trim()))", timeout=TIMEOUT)


def back_and_play(page, last: int) -> None:
    """Previous from the last step, then Play: one step a second to the end, where it stops."""
    page.get_by_role("button", name="Previous").click()
    page.wait_for_function(f"() => location.search.includes('step={last - 1}')", timeout=TIMEOUT)
    page.get_by_role("button", name="Play").click()
    page.wait_for_function(f"() => location.search.includes('step={last}')", timeout=TIMEOUT)
    page.get_by_role("button", name="Play").wait_for(timeout=TIMEOUT)


def emptied(page, label: str, said: str):
    """The text box `label` emptied and sent: the page says `said` and draws no chart. Returns the box."""
    box = page.get_by_label(label)
    box.fill("")
    box.press("Enter")
    page.get_by_text(said).wait_for(timeout=TIMEOUT)
    assert page.locator(".js-plotly-plot").count() == 0
    return box
