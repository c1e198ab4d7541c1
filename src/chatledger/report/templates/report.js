/* ChatLedger conversation report: the judge chart's clicks, the downstream event lists and the
 * chunk drill-down (common.js, which runs first, draws the charts, tabs and contents).
 * Text from conversations and model outputs is only ever written with textContent. */
(function (shared) {
  "use strict";
  var data = shared.data;
  var el = shared.el;
  var STATUS = ["match", "differs", "missed", "invented", "duplicate"];

  /* The judge chart: a click on a chunk's dot opens that chunk (customdata is
   * [drill-down index or -1 when the chunk is not shown there, model index]) ------------ */
  function setupJudgeClicks() {
    var judges = document.querySelector('[data-figure="judge-distribution"]');
    if (judges && judges.on) {
      judges.on("plotly_click", function (event) {
        var point = event.points && event.points[0];
        var target = point && point.customdata;
        if (target && typeof target[0] === "number" && target[0] >= 0) {
          openChunk(target[0], target[1]);
        }
      });
    }
  }

  /* Bulky data (drill-down, downstream events): gzip + base64, unpacked here -------------- */
  var strings = [];
  var drill = null;
  var select = document.getElementById("drill-model");

  function str(index) { return strings[index] || ""; }

  function unpack() {
    var text = document.getElementById("report-bulk").textContent.trim();
    if (!("DecompressionStream" in window)) {
      return Promise.reject(new Error("this browser has no DecompressionStream"));
    }
    var binary = atob(text);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function unpackFailed(error) {
    var message = "The drill-down and event lists could not be unpacked (" + error.message +
      "). Open this file in a current browser (Chrome 80+, Firefox 113+, Safari 16.4+).";
    ["drilldown", "downstream"].forEach(function (id) {
      var section = document.getElementById(id);
      if (section) section.insertBefore(el("p", "note", message), section.children[1] || null);
    });
  }

  /* Downstream events: filled in when a consumer's panel is opened ----------------------- */
  function eventItem(event, modelIndex) {
    var li = el("li");
    li.appendChild(el("span", "etext", str(event[0])));
    var links = el("span", "elinks");
    event[1].forEach(function (pair) {
      links.appendChild(document.createTextNode(" "));
      if (pair[1] >= 0 && drill) {
        var a = el("a", "chunk-link", str(pair[0]));
        a.href = "#chunk-" + pair[1];
        a.setAttribute("data-chunk", String(pair[1]));
        a.setAttribute("data-model", String(modelIndex));
        links.appendChild(a);
      } else {
        links.appendChild(el("span", "chunk-ref", str(pair[0])));
      }
    });
    li.appendChild(links);
    return li;
  }

  function fillEvents(box, events) {
    if (box.getAttribute("data-filled")) return;
    var modelIndex = Number(box.getAttribute("data-model"));
    var consumer = (events[modelIndex] || {})[box.getAttribute("data-consumer")];
    if (!consumer) return;
    Array.prototype.forEach.call(box.querySelectorAll(".event-list"), function (list) {
      (consumer[list.getAttribute("data-kind")] || []).forEach(function (event) {
        list.appendChild(eventItem(event, modelIndex));
      });
    });
    box.setAttribute("data-filled", "1");
  }

  function setupEvents(events) {
    Array.prototype.forEach.call(document.querySelectorAll("details.consumer"), function (details) {
      var box = details.querySelector(".events");
      if (!box) return;
      if (details.open) fillEvents(box, events);
      details.addEventListener("toggle", function () { if (details.open) fillEvents(box, events); });
    });
  }

  /* Drill-down ---------------------------------------------------------------------------- */
  function chosenModel() { return select ? Number(select.value) : 0; }

  function renderMessages(chunkIndex, chunk) {
    var list = el("ol", "messages");
    chunk.m.forEach(function (m) {
      var item = el("li", "msg");
      item.setAttribute("data-mid", str(m[0]));
      var head = el("div", "msg-head");
      head.appendChild(el("span", "who", str(m[1])));
      if (m[2]) head.appendChild(el("span", "when", str(m[2]).replace("T", " ").replace("Z", "")));
      head.appendChild(el("span", "mid", str(m[0])));
      item.appendChild(head);
      item.appendChild(el("p", "msg-text", str(m[3])));
      list.appendChild(item);
    });
    return list;
  }

  function highlight(container, evidence, on) {
    if (!evidence || !evidence.length) return;
    var wanted = {};
    evidence.forEach(function (e) { wanted[str(e)] = true; });
    Array.prototype.forEach.call(container.querySelectorAll(".msg"), function (msg) {
      if (wanted[msg.getAttribute("data-mid")]) msg.classList.toggle("cited", on);
    });
  }

  function itemCell(side, item, container, labels) {
    var td = el("td", "item " + side);
    if (!item) return td;
    td.appendChild(el("span", "item-text", str(item[0])));
    var meta = [];
    if (item[1]) meta.push(str(item[1]));
    if (item[3] !== undefined && item[3] !== null) meta.push("confidence " + Number(item[3]).toFixed(2));
    if (item[2] && item[2].length) meta.push("cites " + item[2].map(str).join(", "));
    if (meta.length) td.appendChild(el("span", "item-meta", meta.join(" · ")));
    (labels || []).forEach(function (triple) {
      var label = str(triple[1]);
      var badge = el("span", "label label-" + label, label === "none" ? "✓ no issue" : label.replace(/_/g, " "));
      badge.style.setProperty("--c", data.labelColours[label] || "#cbd2d9");
      badge.title = str(triple[0]) + ": " + str(triple[2]);
      td.appendChild(badge);
    });
    if (item[2] && item[2].length) {
      td.addEventListener("mouseenter", function () { highlight(container, item[2], true); });
      td.addEventListener("mouseleave", function () { highlight(container, item[2], false); });
    }
    return td;
  }

  function statusCell(side, status) {
    var td = el("td", "item empty " + side);
    var tag = el("span", "st st-" + status, status);
    td.appendChild(tag);
    return td;
  }

  function fieldBlock(field, k, refItems, view, container) {
    var predItems = view.p ? view.p[k] : [];
    var rows = view.a ? view.a[k] : [];
    if (!view.p) {
      rows = [];
      refItems.forEach(function (_, i) { rows.push(i, -1, 2, -1); });
    }
    var block = el("div", "field-block");
    var head = el("div", "field-head");
    head.appendChild(el("span", "field-name", field.replace(/_/g, " ")));
    var score = view.sc ? view.sc[k] : null;
    if (score !== null && score !== undefined) head.appendChild(el("span", "field-score", score.toFixed(2)));
    var matched = 0;
    for (var r = 0; r < rows.length; r += 4) if (STATUS[rows[r + 2]] === "match") matched += 1;
    head.appendChild(el("span", "field-counts",
      matched + " matched · " + refItems.length + " in reference · " + predItems.length + " in challenger"));
    block.appendChild(head);
    var table = el("table", "align");
    var thead = el("thead");
    var hr = el("tr");
    hr.appendChild(el("th", "", "reference"));
    hr.appendChild(el("th", "sim", "≈"));
    hr.appendChild(el("th", "", "challenger"));
    thead.appendChild(hr);
    table.appendChild(thead);
    var body = el("tbody");
    var judged = (view.j && view.j.items) || {};
    for (var i = 0; i < rows.length; i += 4) {
      var ref = rows[i], pred = rows[i + 1], status = STATUS[rows[i + 2]], sim = rows[i + 3];
      var tr = el("tr", "row-" + status);
      tr.appendChild(ref >= 0 ? itemCell("ref", refItems[ref], container) : statusCell("ref", status));
      var simCell = el("td", "sim", sim >= 0 ? String(sim) : "");
      if (status === "differs" && sim < 0) simCell.textContent = "≠";
      tr.appendChild(simCell);
      tr.appendChild(pred >= 0
        ? itemCell("pred", predItems[pred], container, judged[field + "#" + pred])
        : statusCell("pred", status));
      body.appendChild(tr);
    }
    table.appendChild(body);
    block.appendChild(table);
    return block;
  }

  function renderView(chunk, modelIndex, container) {
    var side = el("div", "alignment");
    var head = el("div", "view-head");
    var chip = el("span", "chip", data.models[modelIndex]);
    chip.style.setProperty("--c", data.colours[modelIndex]);
    head.appendChild(chip);
    if (chunk.rs !== "ok") {
      side.appendChild(head);
      side.appendChild(el("p", "note",
        "The reference has no usable extraction for this chunk, so it was not scored."));
      return side;
    }
    var view = chunk.v[modelIndex];
    if (view.c !== undefined) head.appendChild(el("span", "val", "extraction composite " + view.c.toFixed(3)));
    if (view.j && view.j.scores) {
      view.j.scores.forEach(function (s) {
        var text = s[1] === null
          ? str(s[0]) + ": unscored"
          : str(s[0]) + ": accuracy " + s[1] + " · completeness " + s[2] + " · hallucination " + s[3];
        head.appendChild(el("span", "judge-line", text));
      });
    }
    side.appendChild(head);
    if (view.st !== "ok") {
      var reason = view.st === "unavailable"
        ? "This challenger's extraction file could not be read."
        : "This challenger's extraction is " + view.st + " for this chunk: it scores 0 on every field.";
      side.appendChild(el("p", "note", reason));
      (view.pr || []).forEach(function (p) { side.appendChild(el("p", "item-meta", str(p))); });
    }
    var empty = [];
    drill.fields.forEach(function (field, k) {
      var refItems = chunk.r[k];
      var predItems = view.p ? view.p[k] : [];
      if (!refItems.length && !predItems.length) { empty.push(field.replace(/_/g, " ")); return; }
      side.appendChild(fieldBlock(field, k, refItems, view, container));
    });
    if (empty.length) side.appendChild(el("p", "empty-fields", "Empty on both sides (they agree): " + empty.join(", ") + "."));
    side.appendChild(el("p", "empty-fields",
      "confidence: scored from the confidences stated on the items above; see Calibration."));
    return side;
  }

  function renderChunk(details) {
    var index = Number(details.getAttribute("data-chunk"));
    var chunk = drill.chunks[index];
    var body = details.querySelector(".chunk-body");
    var grid = el("div", "drill");
    grid.appendChild(renderMessages(index, chunk));
    grid.appendChild(renderView(chunk, chosenModel(), grid));
    body.replaceChildren(grid);
    details.setAttribute("data-model", String(chosenModel()));
  }

  function openChunk(index, modelIndex) {
    var details = document.getElementById("chunk-" + index);
    if (!details) return;
    if (select && modelIndex !== undefined && modelIndex !== null && !isNaN(modelIndex)) {
      select.value = String(modelIndex);
      rerenderOpen();
    }
    if (!details.open) details.open = true;
    else renderChunk(details);
    history.replaceState(null, "", "#chunk-" + index);
    details.scrollIntoView({ behavior: "smooth", block: "start" });
  }

  function rerenderOpen() {
    Array.prototype.forEach.call(document.querySelectorAll("details.chunk[open]"), renderChunk);
  }

  function setupDrill() {
    if (!drill) return;
    document.body.setAttribute("data-drill-ready", "1");
    Array.prototype.forEach.call(document.querySelectorAll("details.chunk"), function (details) {
      details.addEventListener("toggle", function () {
        if (details.open) renderChunk(details);
        else details.querySelector(".chunk-body").replaceChildren();
      });
    });
    if (select) select.addEventListener("change", rerenderOpen);
    var collapse = document.getElementById("drill-collapse");
    if (collapse) {
      collapse.addEventListener("click", function () {
        Array.prototype.forEach.call(document.querySelectorAll("details.chunk[open]"), function (d) { d.open = false; });
      });
    }
    document.addEventListener("click", function (event) {
      var link = event.target.closest && event.target.closest("a.chunk-link");
      if (!link) return;
      event.preventDefault();
      openChunk(Number(link.getAttribute("data-chunk")), Number(link.getAttribute("data-model")));
    });
    var match = /^#chunk-(\d+)$/.exec(location.hash);
    if (match) openChunk(Number(match[1]));
  }

  setupJudgeClicks();
  unpack().then(function (bulk) {
    strings = bulk.s;
    drill = bulk.drill;
    setupEvents(bulk.events || []);
    setupDrill();
  }).catch(unpackFailed);
})(ChatLedgerReport);
