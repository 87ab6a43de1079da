"""A download whose file cannot be made says so on the page (views.widgets.downloads), in a real browser."""
from pathlib import Path

from harness.servers import spawn
from tests.e2e.streamlit_browser import TIMEOUT, count_runs, rerun_after, wait_runs

ROOT = Path(__file__).resolve().parents[2]


def test_a_download_that_cannot_be_made_says_so_on_the_page(page, tmp_path):
    """Streamlit alone shows a generic note for five seconds; the page says which file failed, until the next
    action, and shows no server path. A working download beside it still works and clears the message."""
    with spawn(Path(__file__).with_name("failing_download_app.py"), session_ttl=None,
               env={"PYTHONPATH": str(ROOT)}) as server:
        count_runs(page)
        page.goto(server.url)
        wait_runs(page, 1)
        rerun_after(page, page.get_by_role("button", name="Download the broken file").click)
        message = page.locator('[data-testid="stAlert"]').filter(has_text="could not be made")
        assert message.count() == 1
        assert "broken.npz could not be made (RuntimeError)" in message.inner_text()
        assert "/srv" not in page.locator('[data-testid="stApp"]').inner_text()
        page.wait_for_timeout(6000)  # Streamlit's own note is gone after 5 s
        assert message.count() == 1
        with page.expect_download(timeout=TIMEOUT) as info:  # its click's rerun clears the message
            rerun_after(page, page.get_by_role("button", name="Download the good file").click)
        info.value.save_as(tmp_path / "good.txt")
        assert (tmp_path / "good.txt").read_bytes() == b"fine"
        assert message.count() == 0
