/* ChatLedger reports: what every report page shares — the charts, the tabs and the table of
 * contents. Runs first; the page's own script then reads ChatLedgerReport.data and .el.
 * Text from conversations, emails and model outputs is only ever written with textContent. */
var ChatLedgerReport = (function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var PLOT_CONFIG = {
    responsive: true,
    displaylogo: false,
    modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"],
    toImageButtonOptions: { format: "png", scale: 2 }
  };

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  /* Charts: every element with data-figure gets the figure of that name ------------------ */
  function drawCharts() {
    var nodes = document.querySelectorAll("[data-figure]");
    Array.prototype.forEach.call(nodes, function (node) {
      var fig = (data.figures || {})[node.getAttribute("data-figure")];
      if (!fig) return;
      Plotly.newPlot(node, fig.data, fig.layout || {}, PLOT_CONFIG);
    });
  }

  /* Tabs: one panel per model (or row) ---------------------------------------------------- */
  function setupTabs() {
    Array.prototype.forEach.call(document.querySelectorAll(".tabs"), function (bar) {
      var tabs = bar.querySelectorAll(".tab");
      Array.prototype.forEach.call(tabs, function (tab) {
        tab.addEventListener("click", function () {
          Array.prototype.forEach.call(tabs, function (other) {
            var selected = other === tab;
            other.setAttribute("aria-selected", selected ? "true" : "false");
            var panel = document.getElementById(other.getAttribute("data-tab"));
            if (panel) panel.hidden = !selected;
          });
          // A chart drawn while its panel was hidden has no width: let it size itself now.
          var panel = document.getElementById(tab.getAttribute("data-tab"));
          if (panel && window.Plotly) {
            Array.prototype.forEach.call(panel.querySelectorAll(".js-plotly-plot"), function (plot) {
              Plotly.Plots.resize(plot);
            });
          }
        });
      });
    });
  }

  /* Table of contents: highlight the section in view ------------------------------------ */
  function setupToc() {
    var links = document.querySelectorAll(".toc a[href^='#']");
    if (!("IntersectionObserver" in window)) return;
    var byId = {};
    Array.prototype.forEach.call(links, function (a) { byId[a.getAttribute("href").slice(1)] = a; });
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) return;
        Array.prototype.forEach.call(links, function (a) { a.classList.remove("active"); });
        var link = byId[entry.target.id];
        if (link) link.classList.add("active");
      });
    }, { rootMargin: "0px 0px -70% 0px" });
    Object.keys(byId).forEach(function (id) {
      var section = document.getElementById(id);
      if (section) observer.observe(section);
    });
  }

  setupTabs();
  setupToc();
  drawCharts();
  return { data: data, el: el };
})();
