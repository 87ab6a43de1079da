// One plotly chart per Streamlit element, kept mounted across reruns: a new figure is drawn with Plotly.react into
// the same graph div (views/chart.py says why). Streamlit calls the element's loader with each payload; the loader
// calls draw() here. This module, theme.json and plotly.min.js come from the app's own server (no CDN).

const VERSION = new URL(import.meta.url).search;  // the loader's ?v=..., so a new release is fetched again
let plotlyLoaded = null;  // one plotly.js and one theme per page, shared by every chart
let themeLoaded = null;
const charts = new WeakMap();  // the element's container -> its chart

function loadPlotly() {
  plotlyLoaded ??= new Promise((resolve, reject) => {
    const before = window.Plotly;  // Streamlit's own chart code may have set one: leave it in place
    const script = document.createElement("script");
    script.src = new URL("../views.chart.plotly/plotly.min.js" + VERSION, import.meta.url).href;
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

// The payload: a 4-byte length, that many bytes of JSON ({figure, config}), then the raw bytes of every typed
// array, which the JSON names by {"at": offset, "bytes": length} (views/chart.py pack()).
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
        value.bdata = bytes.buffer.slice(start, start + value.bdata.bytes);  // an ArrayBuffer, as plotly takes it
      } else {
        Object.values(value).forEach(attach);
      }
    }
  };
  attach(header.figure);
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
  const chart = {gd, next: null, shown: null, busy: false, width: 0};
  chart.resize = new ResizeObserver(() => {
    const width = parent.getBoundingClientRect().width;
    if (chart.plotly && chart.shown && width && width !== chart.width) {
      chart.width = width;
      chart.plotly.relayout(gd, {width});
    }
  });
  chart.resize.observe(parent);
  chart.cleanup = () => {
    chart.resize.disconnect();
    if (chart.plotly) chart.plotly.purge(gd);
    charts.delete(parent);
  };
  return chart;
}

// Draw payloads until none is waiting: the newest wins, one Plotly call at a time per chart.
async function drain(chart, parent) {
  chart.busy = true;
  try {
    const [plotly, theme] = await Promise.all([loadPlotly(), loadTheme()]);
    chart.plotly = plotly;
    while (chart.next) {
      const bytes = chart.next;
      chart.next = null;
      if (sameBytes(chart.shown, bytes)) continue;  // a rerun that did not change this chart
      const {figure, config} = unpack(bytes);
      chart.width = parent.getBoundingClientRect().width;
      await plotly.react(chart.gd, figure.data, themed(figure.layout || {}, theme, chart.width), config);
      chart.shown = bytes;
    }
  } finally {
    chart.busy = false;
  }
}

export async function draw({data, parentElement}) {
  let chart = charts.get(parentElement);
  if (!chart) {
    chart = newChart(parentElement);
    charts.set(parentElement, chart);
  }
  chart.next = data;
  if (!chart.busy) await drain(chart, parentElement);
  return chart.cleanup;
}
