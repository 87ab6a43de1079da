// A chart's own Layer and Head sliders (views/charts/head_chart.py says why). The payload holds every map the sliders
// reach (heads.stack: layers x heads x rows x cols, float32 once unpacked); a move puts the picked map and its title
// in the figure and chart.js draws it at once, with no server round trip. After the paint, the selection goes to the
// component's state: the rerun it causes writes the link and the downloads, and sends the same payload again, which
// chart.js does not draw twice. Plain <input type=range> with a <label>: the keyboard moves them as any slider.

let ids = 0;  // element ids, for the labels

const STYLE = `
.attnviz-heads { display: flex; flex-wrap: wrap; gap: 0.75rem 2rem; margin: 0 0 0.75rem; }
.attnviz-slider { flex: 1 1 12rem; min-width: 10rem; max-width: 28rem; }
.attnviz-slider label { display: block; font-size: 0.875rem; line-height: 1.6; color: var(--st-text-color, #31333f); }
.attnviz-track { position: relative; padding-top: 1.5rem; }
.attnviz-track input { display: block; width: 100%; margin: 0; height: 1.1rem; cursor: pointer;
  accent-color: var(--st-primary-color, #ff4b4b); }
.attnviz-track input:focus-visible { outline: 2px solid var(--st-primary-color, #ff4b4b); outline-offset: 3px; }
.attnviz-track output { position: absolute; top: 0; transform: translateX(-50%); font-size: 0.875rem;
  font-family: var(--st-code-font, monospace); color: var(--st-primary-color, #ff4b4b); white-space: nowrap; }
.attnviz-ends { display: flex; justify-content: space-between; font-size: 0.75rem; font-family: var(--st-code-font,
  monospace); color: var(--st-text-color, #31333f); opacity: 0.6; }
.attnviz-slider.attnviz-disabled { opacity: 0.45; }
.attnviz-slider.attnviz-disabled input { cursor: not-allowed; }
`;

function addStyle() {
  if (document.getElementById("attnviz-heads-style")) return;
  const style = document.createElement("style");
  style.id = "attnviz-heads-style";
  style.textContent = STYLE;
  document.head.appendChild(style);
}

function element(tag, className) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  return node;
}

function slider(name, chart) {
  const id = `attnviz-${name}-${++ids}`;
  const box = element("div", "attnviz-slider");
  const label = element("label");
  label.htmlFor = id;
  const track = element("div", "attnviz-track");
  const input = element("input");
  Object.assign(input, {type: "range", id, min: 0, step: 1});
  const value = element("output");
  value.htmlFor = id;
  const ends = element("div", "attnviz-ends");
  const [low, high] = [element("span"), element("span")];
  ends.append(low, high);
  track.append(value, input);
  box.append(label, track, ends);
  const placeValue = () => {  // the number above the thumb, as Streamlit's slider shows it
    const share = input.max > 0 ? input.value / input.max : 0;
    value.textContent = input.value;
    value.style.left = `calc(${share * 100}% + ${(0.5 - share) * 16}px)`;
  };
  input.addEventListener("input", () => {
    placeValue();
    chart.selection = {...chart.selection, [name]: Number(input.value)};
    chart.move();
  });
  input.addEventListener("change", () => commit(chart));
  return {box, label, input, low, high, placeValue};
}

function controls(chart, parent) {
  addStyle();
  const row = element("div", "attnviz-heads");
  row.setAttribute("role", "group");
  const sliders = {layer: slider("layer", chart), head: slider("head", chart)};
  row.append(sliders.layer.box, sliders.head.box);
  parent.insertBefore(row, chart.gd);
  return {row, sliders};
}

// After the paint of the move: the selection to the server (one rerun for a key press or a mouse release).
function commit(chart) {
  chart.committing = true;
  if (!chart.busy) send(chart);
}

function send(chart) {
  chart.committing = false;
  requestAnimationFrame(() => setTimeout(() => {
    const {layer, head} = chart.selection;
    if (chart.sent && chart.sent.layer === layer && chart.sent.head === head) return;
    chart.sent = {layer, head};
    chart.setStateValue?.("selection", {layer, head});
  }, 0));
}

// A new payload (chart.js): its maps, and the selection to show: the chart's own while it is within the new maps
// (the server learns it from the component's state), else the server's (a fresh chart, or fewer layers or heads).
export function show(chart, heads, parent) {
  if (!heads) {  // a figure without sliders in this chart: none is shown
    chart.controls?.row.remove();
    chart.controls = chart.heads = chart.selection = null;
    return;
  }
  const [layers, count, rows, cols] = heads.stack.shape.split(",").map(Number);
  const keep = chart.selection && chart.selection.layer < layers && chart.selection.head <= heads.head_max;
  if (!keep) chart.selection = {layer: heads.layer, head: heads.head};
  chart.heads = {values: new Float32Array(heads.stack.bdata), count, rows, cols, title: heads.title,
                 trace: heads.trace, filename: chart.config?.toImageButtonOptions?.filename};
  chart.controls ??= controls(chart, parent);
  chart.controls.row.setAttribute("aria-label", heads.group);  // from the page, in its language
  chart.drawn = () => {
    if (chart.committing) send(chart);
  };
  for (const [name, max, disabled] of [["layer", layers - 1, false], ["head", heads.head_max, heads.head_disabled]]) {
    const s = chart.controls.sliders[name];
    s.label.textContent = heads.labels[name];
    s.input.max = max;
    s.input.value = chart.selection[name];
    s.input.disabled = disabled || max === 0;
    s.box.classList.toggle("attnviz-disabled", s.input.disabled);
    s.low.textContent = "0";
    s.high.textContent = String(max);
    s.placeValue();
  }
}

// The figure's map and title for the chart's selection (a stack of one map per layer, the mean of its heads, has
// no head to pick).
export function pick(chart) {
  const {values, count, rows, cols, title, trace, filename} = chart.heads;
  const {layer, head} = chart.selection;
  const start = (layer * count + (count > 1 ? head : 0)) * rows * cols;
  const z = [];
  for (let r = 0; r < rows; r++) z.push(values.subarray(start + r * cols, start + (r + 1) * cols));
  chart.figure.data[trace].z = z;
  const text = title.replaceAll("{layer}", layer).replaceAll("{head}", head);
  chart.figure.layout.title = {...chart.figure.layout.title, text};
  if (filename) {  // the camera's file name says the layer and head shown (views/widgets/file_names.py)
    const image = {...chart.config.toImageButtonOptions};
    image.filename = filename.replaceAll("{layer}", layer).replaceAll("{head}", head);
    chart.config = {...chart.config, toImageButtonOptions: image};
  }
}
