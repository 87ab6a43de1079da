"""views.shell.errors.said: what the frame wraps every page's view in. A failure a visitor can cause (a layer that
does not fit the budget, say) is a plain message and the page stops; a bug is still an exception the tests see."""
import pytest
from streamlit.testing.v1 import AppTest


def _page(error: str) -> None:
    import streamlit as st  # noqa: PLC0415 - AppTest runs this function's source alone

    from runtime.budget import OverBudget  # noqa: PLC0415 - AppTest runs this function's source alone
    from views.shell.errors import said  # noqa: PLC0415 - AppTest runs this function's source alone

    with said("The model"):
        st.write("before")
        raise {"budget": OverBudget("it needs 3 GB"), "bug": KeyError("layer")}[error]
    st.write("never drawn")


@pytest.mark.parametrize("error", ["budget", "bug"])
def test_a_visitors_failure_is_said_and_a_bug_is_raised(error):
    at = AppTest.from_function(_page, args=(error,)).run()
    shown = [m.value for m in at.markdown]
    assert "before" in shown and "never drawn" not in shown
    if error == "budget":
        assert not at.exception
        assert [e.value for e in at.error] == ["The model was not run, to keep the server up for everyone: it needs "
                                               "3 GB. Pick a smaller model (fewer layers or heads, a smaller d_model "
                                               "or d_ff) or a shorter text."]
    else:
        assert at.exception and not at.error
