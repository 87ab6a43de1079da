"""Widget state as Streamlit's frontend keeps it: what a widget holds after a run, and how it goes back to the
server in a BackMsg's ClientState (harness/students/protocol.py)."""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass, replace

# views.charts.mounted.COMPONENT, the app's mounted charts (not imported: a load client stays free of the app's modules)
CHART_COMPONENT = "attnviz_chart"


@dataclass
class Widget:
    id: str
    kind: str  # the Element oneof name: slider, text_area, checkbox, radio, selectbox, button_group, ...
    value_type: str  # the WidgetState oneof: double_array_value, string_value, bool_value, string_array_value
    value: object
    fragment_id: str  # "" outside any st.fragment
    script_hash: str  # metadata.active_script_hash: the page (or main) script that drew it
    low: float = 0.0  # a slider's range
    high: float = 0.0
    # a chart's own sliders (views/charts/head_chart.py): {name: (value it starts at, high)}
    sliders: dict | None = None
    label: str = ""  # as shown (a button is found by it: a button without a key has none in its id)
    disabled: bool = False


def held_value(element, kind: str, old: Widget | None) -> tuple[str, object] | None:
    """(value_type, value) the frontend keeps for this widget: the server's value when it sets one (set_value),
    else the value already held, else the widget's default. None: not a value-holding widget."""
    p = getattr(element, kind)
    keep = old.value if old is not None else None
    if kind == "slider":
        return "double_array_value", list(p.value) if p.set_value else keep or list(p.default)
    if kind in ("text_area", "text_input"):
        return "string_value", p.value if p.set_value else keep if keep is not None else p.default
    if kind == "checkbox":
        return "bool_value", p.value if p.set_value else keep if keep is not None else p.default
    if kind in ("radio", "selectbox"):
        default = p.options[p.default] if p.HasField("default") and p.default < len(p.options) else None
        value = p.raw_value if p.set_value and p.HasField("raw_value") else keep if keep is not None else default
        return ("string_value", value) if value is not None else None
    if kind == "bidi_component":  # a chart with its own sliders: its state once they moved (a JSON text)
        return ("json_value", keep) if chart_sliders(element) else None
    if kind == "button":  # a click's trigger, sent with that one rerun only (protocol.Session.click)
        return "trigger_value", None
    if kind == "button_group":
        default = [p.options[i].content for i in p.default if i < len(p.options)]
        return "string_array_value", list(p.raw_values) if p.set_value else keep if keep is not None else default
    return None


def drawn_widget(msg, held: dict[str, Widget]) -> Widget | None:
    """The widget a ForwardMsg's new_element draws, with the value the frontend keeps (`held`: the widgets it held
    before this message, by id); None if it draws none, or one inside a form."""
    element = msg.delta.new_element
    kind = element.WhichOneof("type")
    p = getattr(element, kind) if kind else None
    if not getattr(p, "id", "") or getattr(p, "form_id", ""):
        return None
    value = held_value(element, kind, held.get(p.id))
    if value is None:
        return None
    return Widget(p.id, kind, *value, msg.delta.fragment_id, msg.metadata.active_script_hash,
                  getattr(p, "min", 0.0), getattr(p, "max", 0.0), chart_sliders(element) if kind == "bidi_component"
                  else None, getattr(p, "label", ""), getattr(p, "disabled", False))


def chart_sliders(element) -> dict | None:
    """The Layer and Head sliders a chart draws itself, from its payload (views/charts/mounted.py pack(): a 4-byte
    length, then JSON whose "heads" names them): {"layer": (value, high), "head": (value, high)}; None for another
    element."""
    p = element.bidi_component
    if p.component_name != CHART_COMPONENT:
        return None
    (length,) = struct.unpack_from("<I", p.bytes)
    heads = json.loads(p.bytes[4:4 + length]).get("heads")
    if not heads:
        return None
    layers = int(heads["stack"]["shape"].split(",")[0])
    return {"layer": (heads["layer"], layers - 1), "head": (heads["head"], heads["head_max"])}


def slider_of(widgets: dict[str, Widget], key: str) -> tuple[Widget, int, int, int] | None:
    """(widget, value, low, high) of the slider bound to ?key=: a Streamlit slider keyed `key`, or the slider of
    that name a chart draws itself (the page's short-text heatmap)."""
    for widget in widgets.values():
        if widget.kind == "slider" and widget.id.endswith("-" + key):
            return widget, int(widget.value[0]), int(widget.low), int(widget.high)
        if widget.sliders and key in widget.sliders:
            value, high = widget.sliders[key]
            return widget, _selection(widget)[key] if widget.value else value, 0, high
    return None


def moved(widget: Widget, key: str, value: int) -> Widget:
    """The widget as the frontend holds it once its slider `key` went to value: a chart's own sets its state."""
    if widget.kind == "slider":
        return replace(widget, value=[float(value)])
    selection = _selection(widget) if widget.value else {k: v for k, (v, _) in widget.sliders.items()}
    return replace(widget, value=json.dumps({"selection": {**selection, key: value}}))


def _selection(widget: Widget) -> dict:
    return json.loads(widget.value)["selection"]


def add_widget_states(client_state, widgets) -> None:
    """Every widget's value into a ClientState's widget_states, as the frontend sends them with a rerun."""
    for widget in widgets:
        if widget.value is None:  # a chart whose sliders never moved: the frontend holds no state for it
            continue
        state = client_state.widget_states.widgets.add()
        state.id = widget.id
        if widget.value_type == "double_array_value":
            state.double_array_value.data.extend(widget.value)
        elif widget.value_type == "string_array_value":
            state.string_array_value.data.extend(widget.value)
        else:
            setattr(state, widget.value_type, widget.value)
