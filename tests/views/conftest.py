"""What the page tests share."""
import pytest

from views.widgets import downloads


@pytest.fixture
def offered(monkeypatch) -> dict:
    """{label: (file name, build)} of the download buttons the page drew in its last run (build() makes the file)."""
    buttons = {}
    real = downloads.button

    def recording(label, build, file_name, mime, container=None):
        buttons[label] = (file_name, build)
        real(label, build, file_name, mime, container)

    monkeypatch.setattr(downloads, "button", recording)
    return buttons
