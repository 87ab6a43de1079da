// One plotly chart per Streamlit element, kept mounted across reruns: a new figure is drawn with Plotly.react into
// the same graph div (views/charts/mounted.py says why). Streamlit calls the element's loader with each payload; the loader
// calls draw() here. This module, heads.js, theme.json and plotly.min.js come from the app's own server (no CDN).

const VERSION = new URL(import.meta.url).search;  // the loader's ?v=..., so a new release is fetched again
let plotlyLoaded = null;  // one plotly.js, one theme and one heads.js per page, shared by every chart
let themeLoaded = null;
let headsLoaded = null;
const charts = new WeakMap();  // the element's container -> its chart

function loadPlotly() {
  plotlyLoaded ??= new Promise((resolve, reject) => {
    const before = window.Plotly;  // Streamlit's own chart code may have set one: leave it in place
    const script = document.createElement("script");
    script.src = new URL("../views.charts.mounted.plotly/plotly.min.js" + VERSION, import.meta.url).href;
    script.onload = () => {
      const plotly = window.Plotly;
      if (before) window.Plotly = before;
      resolve(plotly);
    };
    script.onerror = () => {
      plotlyLoaded = null;
      reject(new Error("plotly.js did not load"));
    };
    document.head.appendChild(script);
  });
  return plotlyLoaded;
}

function loadTheme() {
  themeLoaded ??= fetch(new URL("theme.json" + VERSION, import.meta.url)).then((r) => r.json());
  return themeLoaded;
}

function loadHeads() {  // only a chart with its own Layer and Head sliders needs it
  headsLoaded ??= import(new URL("heads.js" + VERSION, import.meta.url).href);
  return headsLoaded;
}

// A typed array sent as integers in units of 1/units (viz/wire.py: two bytes a cell where float32 takes four), as
// float32 again, NaN where it holds the gap value: the chart's hover, colours and gaps are those of the values.
function fromUnits(spec, raw) {
  const ints = spec.dtype === "i2" ? new Int16Array(raw) : new Uint16Array(raw);
  const values = new Float32Array(ints.length);
  for (let i = 0; i < ints.length; i++) values[i] = ints[i] === spec.nan ? NaN : ints[i] / spec.units;
  return values;
}

// The payload: a 4-byte length, that many bytes of JSON ({figure, config, heads?}), then the raw bytes of every
// typed array, which the JSON names by {"at": offset, "bytes": length} (views/charts/mounted.py pack()).
function unpack(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + headerLength)));
  const blobs = bytes.byteOffset + 4 + headerLength;
  const attach = (value) => {
    if (Array.isArray(value)) {
      value.forEach(attach);
    } else if (value && typeof value === "object") {
      if (typeof value.dtype === "string" && value.bdata && typeof value.bdata.at === "number") {
        const start = blobs + value.bdata.at;
        const raw = bytes.buffer.slice(start, start + value.bdata.bytes);  // an ArrayBuffer, as plotly takes it
        if (value.units) {
          value.bdata = fromUnits(value, raw).buffer;
          value.dtype = "f4";
          delete value.units;
          delete value.nan;
        } else {
          value.bdata = raw;
        }
      } else {
        Object.values(value).forEach(attach);
      }
    }
  };
  attach(header.figure);
  attach(header.heads);
  return header;
}

// What Streamlit's own st.plotly_chart does to a figure in this app: its chart theme as the template, a bold
// title, the width of the column.
function themed(layout, theme, width) {
  const out = {...layout, template: {layout: theme}, width};
  if (out.title && out.title.text) out.title = {...out.title, text: `<b>${out.title.text}</b>`};
  out.height ??= 450;
  return out;
}

function sameBytes(a, b) {
  if (!a || a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

function newChart(parent) {
  const gd = document.createElement("div");
  gd.className = "attnviz-chart";
  parent.appendChild(gd);
  const chart = {gd, next: null, shown: null, moved: false, busy: false, width: 0};
  chart.resize = new ResizeObserver(() => {
    const width = parent.getBoundingClientRect().width;
    if (chart.plotly && chart.shown && width && width !== chart.width) {
      chart.width = width;
      chart.plotly.relayout(gd, {width});
    }
  });
  chart.resize.observe(parent);
  // Streamlit also calls the cleanup a draw() returns when a newer payload superseded that draw while it ran; the
  // chart is only taken down once its element has left the page.
  chart.cleanup = () => {
    if (parent.isConnected) return;
    chart.resize.disconnect();
    if (chart.plotly) chart.plotly.purge(gd);
    charts.delete(parent);
  };
  chart.move = () => {  // a slider of the chart's own moved (heads.js): draw the map it picked
    chart.moved = true;
    if (!chart.busy) drain(chart, parent);
  };
  return chart;
}

// Draw payloads and slider moves until none is waiting: the newest wins, one Plotly call at a time per chart.
async function drain(chart, parent) {
  chart.busy = true;
  try {
    const [plotly, theme] = await Promise.all([loadPlotly(), loadTheme()]);
    chart.plotly = plotly;
    while (chart.next || chart.moved) {
      let bytes = null;
      if (chart.next) {
        bytes = chart.next;
        chart.next = null;
        if (sameBytes(chart.shown, bytes)) continue;  // a rerun that did not change this chart
        const header = unpack(bytes);
        chart.figure = header.figure;
        chart.config = header.config;
        chart.clicks = Boolean(header.clicks);
        chart.label = header.label || "";
        if (header.heads || chart.heads) (await loadHeads()).show(chart, header.heads, parent);
      }
      chart.moved = false;
      if (chart.heads) (await loadHeads()).pick(chart);
      chart.width = parent.getBoundingClientRect().width;
      await plotly.react(chart.gd, chart.figure.data, themed(chart.figure.layout || {}, theme, chart.width),
                         chart.config);
      name(chart);
      if (bytes) chart.shown = bytes;
      if (chart.clicks && !chart.listening) listen(chart);
      chart.drawn?.();
    }
  } finally {
    chart.busy = false;
  }
}

// The chart's text alternative (viz/describe.py, in the page's language), as Streamlit's st.plotly_chart says its alt:
// a figure with a name. A chart with its own sliders names the map they picked.
function name(chart) {
  let label = chart.label;
  if (chart.heads && chart.selection) {
    label = label.replaceAll("{layer}", chart.selection.layer).replaceAll("{head}", chart.selection.head);
  }
  if (label) {
    chart.gd.setAttribute("role", "figure");
    chart.gd.setAttribute("aria-label", label);
  } else {
    chart.gd.removeAttribute("role");
    chart.gd.removeAttribute("aria-label");
  }
}

// A chart whose payload asks for clicks (views/charts/mounted.py show_chart's on_click) says which point was clicked as its
// "click" state; `at` makes a second click on the same point a change too (the server may have moved on since).
function listen(chart) {
  chart.listening = true;
  chart.gd.on("plotly_click", (event) => {
    const point = event && event.points && event.points[0];
    if (point && chart.clicks) {
      chart.setStateValue?.("click", {curve: point.curveNumber, point: point.pointIndex, at: Date.now()});
    }
  });
}

// Returns at once (the drawing goes on): Streamlit takes down a chart whose draw() returns after a newer payload.
export function draw({data, parentElement, setStateValue}) {
  let chart = charts.get(parentElement);
  if (!chart) {
    chart = newChart(parentElement);
    charts.set(parentElement, chart);
  }
  chart.setStateValue = setStateValue;
  chart.next = data;
  if (!chart.busy) drain(chart, parentElement);  // a failure is the page's error, as an uncaught one
  return chart.cleanup;
}
