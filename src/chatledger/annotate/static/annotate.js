/* The annotation page. Every text from the chats reaches the page through textContent or a
   form control's value, never as markup; the server's Content-Security-Policy allows this
   script alone. Every change is sent at once (debounced a little) as the chunk's whole state. */
"use strict";
(() => {
  const token = new URLSearchParams(window.location.search).get("token") || "";
  const HEADERS = { "X-ChatLedger-Token": token, "Content-Type": "application/json" };

  let session = null; // /api/session
  let view = null; // /api/chunks/N: chunk, speakers, prefill, state, covers, problems
  let state = null; // the chunk's state, edited here and sent back whole
  let index = 0;
  let focus = null; // {field, item}
  let picking = null; // {field, item, path: [prop] or [prop, subIndex, subProp], multiple}
  let timer = null;
  let pending = Promise.resolve();
  let edits = 0; // changes made; a save reports "saved" only when it carried the last one
  let base = null; // the chunk's state as last loaded or saved: what a merge compares against
  let conflict = null; // {at, current}: a save refused because another tab saved the chunk

  // ---- small helpers -------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "value") node.value = value;
      else if (key === "checked") node.checked = Boolean(value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  async function api(path, options) {
    const response = await fetch(path, Object.assign({ headers: HEADERS, cache: "no-store" }, options || {}));
    let body = {};
    try { body = await response.json(); } catch (_) { body = { error: response.statusText }; }
    if (!response.ok) {
      const error = new Error(body.error || response.statusText);
      error.status = response.status;
      error.body = body;
      throw error;
    }
    return body;
  }

  function setStatus(text, error) {
    const node = document.getElementById("status");
    node.textContent = text;
    node.classList.toggle("error", Boolean(error));
  }

  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const specOf = (name) => session.fields.find((f) => f.name === name);
  const fieldState = (name) => state.fields[name];

  function statusOf(name, item) {
    if (item.prefill === null || item.prefill === undefined) return "added";
    const original = view.prefill[name][item.prefill];
    if (!same(original, item.value)) return "edited";
    // Left alone in a reviewed field, an item is recorded as accepted: it reads so.
    return item.accepted || fieldState(name).reviewed ? "accepted" : "prefilled";
  }

  function summary(value) {
    if (typeof value === "string") return value;
    if (value && typeof value === "object") {
      for (const key of ["text", "question", "name", "url", "phase", "pattern", "emotion", "opening_mood"]) {
        if (typeof value[key] === "string" && value[key]) return value[key];
      }
    }
    return JSON.stringify(value);
  }

  // ---- the item a new "add" creates (the server's form spec) -----------------------------

  function defaultOf(prop) {
    if (prop.widget === "enum") return prop.values[0];
    if (prop.widget === "speaker") return prop.nullable ? null : (view.speakers[0] || "");
    if (prop.widget === "speakers" || prop.widget === "evidence" || prop.widget === "subitems") return [];
    if (prop.widget === "number") return 0.5;
    if (prop.widget === "hidden") return null;
    if (prop.widget === "message") return view.chunk.messages.length ? view.chunk.messages[0].id : "";
    return "";
  }

  function newItem(spec) {
    if (spec.kind === "strings" || spec.kind === "text") return "";
    if (spec.kind === "messages") return null; // chosen by clicking a message
    const value = {};
    for (const prop of spec.props) value[prop.name] = defaultOf(prop);
    return value;
  }

  // ---- changes ---------------------------------------------------------------------------

  function changed(name) {
    fieldState(name).reviewed = true;
    schedule();
  }

  function schedule() {
    edits += 1;
    setStatus("saving…");
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => { timer = null; flush(); }, 150);
  }

  const copy = (value) => JSON.parse(JSON.stringify(value));

  function flush() {
    if (timer !== null) { clearTimeout(timer); timer = null; }
    const target = state;
    const at = index;
    const carried = edits;
    pending = pending.then(async () => {
      if (conflict !== null) { // nothing is sent until the person chose
        setStatus("not saved: changed in another tab (choose above)", true);
        return;
      }
      // Serialised when its turn comes: it carries the revision the save before it got.
      const body = JSON.stringify(target);
      try {
        const result = await api(`/api/chunks/${at}`, { method: "PUT", body });
        target.revision = result.revision;
        if (target === state) base = JSON.parse(body);
        if (target === state) base.revision = result.revision;
        if (at === index) {
          view.covers = result.covers;
          view.problems = result.problems;
          renderProblems();
        }
        session.done = result.done;
        session.chunks[at].done = state && at === index ? state.done : session.chunks[at].done;
        renderProgress();
        if (carried === edits && timer === null) setStatus(`saved ${new Date().toLocaleTimeString()}`);
      } catch (error) {
        if (error.status === 409 && at === index && target === state) {
          conflict = { at, current: error.body.current };
          renderConflict();
          setStatus("not saved: changed in another tab", true);
        } else {
          setStatus(`not saved: ${error.message}`, true);
        }
      }
    });
    return pending;
  }

  // ---- a save refused because another tab or window saved the chunk first ---------------

  function fieldsDiffering(a, b) {
    return session.fields.map((f) => f.name).filter((name) => !same(a.fields[name], b.fields[name]));
  }

  function resolve(choice) {
    const current = conflict.current;
    if (choice === "theirs") {
      state = copy(current);
      view.state = state;
    } else if (choice === "merge") {
      // Theirs, with every field this tab changed since it loaded the chunk taken from here.
      const merged = copy(current);
      for (const name of fieldsDiffering(state, base)) merged.fields[name] = copy(state.fields[name]);
      merged.done = state.done || current.done;
      state = merged;
      view.state = state;
    } else {
      state.revision = current.revision; // mine, laid over theirs knowingly
    }
    base = copy(current);
    conflict = null;
    renderConflict();
    renderFields();
    if (choice === "theirs") setStatus(`took the other tab's save (${current.updated_at})`);
    else schedule();
  }

  function renderConflict() {
    const box = document.getElementById("conflict");
    box.textContent = "";
    box.hidden = conflict === null;
    if (conflict === null) return;
    const current = conflict.current;
    const theirs = fieldsDiffering(current, base);
    const mine = fieldsDiffering(state, base);
    const label = (names) => names.length ? names.map((n) => specOf(n).label).join(", ") : "nothing";
    box.append(
      el("p", { text: `This chunk was saved in another tab or window at ${current.updated_at}, after this page loaded it. Your changes are not saved yet.` }),
      el("p", { class: "sides", text: `There: ${label(theirs)} changed. Here: ${label(mine)} changed.` }),
      el("div", { class: "actions" },
        el("button", { type: "button", "data-action": "merge", text: "merge (theirs + my changed fields)", onclick: () => resolve("merge") }),
        el("button", { type: "button", "data-action": "theirs", text: "take theirs", onclick: () => resolve("theirs") }),
        el("button", { type: "button", class: "danger", "data-action": "mine", text: "overwrite with mine", onclick: () => resolve("mine") })));
  }

  function accept(name, i) {
    const item = fieldState(name).items[i];
    if (item.prefill === null || item.prefill === undefined) return;
    item.value = JSON.parse(JSON.stringify(view.prefill[name][item.prefill]));
    item.accepted = true;
    changed(name);
    renderFields();
  }

  function remove(name, i) {
    const fs = fieldState(name);
    const [item] = fs.items.splice(i, 1);
    if (item.prefill !== null && item.prefill !== undefined) fs.deleted.push(item.prefill);
    if (focus && focus.field === name) focus = fs.items.length ? { field: name, item: Math.min(i, fs.items.length - 1) } : null;
    stopPicking();
    changed(name);
    renderFields();
  }

  function restore(name, prefillIndex) {
    const fs = fieldState(name);
    fs.deleted = fs.deleted.filter((p) => p !== prefillIndex);
    const value = JSON.parse(JSON.stringify(view.prefill[name][prefillIndex]));
    fs.items.push({ value, prefill: prefillIndex, accepted: false });
    changed(name);
    renderFields();
  }

  function add(name) {
    const spec = specOf(name);
    const fs = fieldState(name);
    if ((spec.kind === "text" || spec.kind === "object") && fs.items.length) return;
    const value = newItem(spec);
    if (spec.kind === "messages") {
      // An evidence id is added by clicking messages.
      picking = { field: name, item: null, path: [], multiple: true };
      renderPicking();
      return;
    }
    fs.items.push({ value, prefill: null, accepted: false });
    focus = { field: name, item: fs.items.length - 1 };
    changed(name);
    renderFields();
  }

  function setValue(name, i, path, value) {
    const item = fieldState(name).items[i];
    if (path.length === 0) item.value = value;
    else {
      let target = item.value;
      for (const key of path.slice(0, -1)) target = target[key];
      target[path[path.length - 1]] = value;
    }
    changed(name);
  }

  function getValue(name, i, path) {
    let target = fieldState(name).items[i].value;
    for (const key of path) target = target[key];
    return target;
  }

  // ---- picking messages ------------------------------------------------------------------

  function startPicking(name, i, path, multiple) {
    if (picking && picking.field === name && picking.item === i && same(picking.path, path)) {
      stopPicking();
      return;
    }
    picking = { field: name, item: i, path, multiple };
    focus = { field: name, item: i };
    renderFields();
    renderPicking();
  }

  function stopPicking() {
    picking = null;
    renderPicking();
  }

  function clickMessage(id) {
    if (!picking) return;
    const { field, item, path, multiple } = picking;
    if (item === null) {
      // A field of message ids: each click adds one (or takes it away again).
      const fs = fieldState(field);
      const at = fs.items.findIndex((it) => it.value === id);
      if (at >= 0) remove(field, at);
      else { fs.items.push({ value: id, prefill: null, accepted: false }); changed(field); renderFields(); }
      renderPicking();
      return;
    }
    if (multiple) {
      const list = getValue(field, item, path);
      const at = list.indexOf(id);
      if (at >= 0) list.splice(at, 1); else list.push(id);
      changed(field);
    } else {
      setValue(field, item, path, id);
      picking = null;
    }
    renderFields();
    renderPicking();
  }

  function pickedIds() {
    if (!picking) return new Set();
    if (picking.item === null) return new Set(fieldState(picking.field).items.map((it) => it.value));
    const value = getValue(picking.field, picking.item, picking.path);
    return new Set(Array.isArray(value) ? value : [value]);
  }

  function citedIds() {
    if (!focus) return new Set();
    const fs = fieldState(focus.field);
    const item = fs && fs.items[focus.item];
    if (!item) return new Set();
    const ids = new Set();
    const walk = (value, key) => {
      if (typeof value === "string" && ["evidence", "start_message_id", "end_message_id", "message_id"].includes(key)) ids.add(value);
      else if (Array.isArray(value)) value.forEach((v) => walk(v, key));
      else if (value && typeof value === "object") Object.entries(value).forEach(([k, v]) => walk(v, k));
    };
    walk(item.value, focus.field === "evidence_message_ids" ? "evidence" : "");
    return ids;
  }

  function renderPicking() {
    document.body.classList.toggle("picking", Boolean(picking));
    const note = document.getElementById("picking");
    if (picking) {
      const what = picking.item === null ? "evidence message ids" : `${picking.field.replace(/_/g, " ")} #${picking.item + 1}: ${picking.path.filter((p) => typeof p === "string").join(" ")}`;
      note.textContent = `Picking messages for ${what} — click messages; Esc when done.`;
      note.hidden = false;
    } else {
      note.hidden = true;
    }
    const picked = pickedIds();
    const cited = citedIds();
    for (const node of document.querySelectorAll("#messages .msg")) {
      node.classList.toggle("picked", picked.has(node.dataset.id));
      node.classList.toggle("cited", !picking && cited.has(node.dataset.id));
    }
    for (const node of document.querySelectorAll("button[data-action=pick]")) {
      const on = picking && node.dataset.field === picking.field && Number(node.dataset.index) === picking.item && node.dataset.path === JSON.stringify(picking.path);
      node.classList.toggle("on", Boolean(on));
    }
  }

  // ---- widgets ---------------------------------------------------------------------------

  function speakerSelect(current, nullable, onchange) {
    const select = el("select", { onchange: () => onchange(select.value === "" && nullable ? null : select.value) });
    if (nullable) select.append(el("option", { value: "", text: "—" }));
    const names = [...view.speakers];
    if (current && !names.includes(current)) names.push(current);
    for (const name of names) select.append(el("option", { value: name, text: name }));
    select.value = current === null || current === undefined ? "" : current;
    return select;
  }

  function messageSelect(current, onchange) {
    const select = el("select", { onchange: () => onchange(select.value) });
    const ids = view.chunk.messages.map((m) => m.id);
    if (current && !ids.includes(current)) select.append(el("option", { value: current, text: `${current} (not in the chunk)` }));
    for (const m of view.chunk.messages) select.append(el("option", { value: m.id, text: `${m.id} · ${m.speaker}: ${m.text.slice(0, 40)}` }));
    select.value = current || "";
    return select;
  }

  function pickButton(name, i, path, multiple) {
    return el("button", {
      type: "button", "data-action": "pick", "data-field": name, "data-index": i,
      "data-path": JSON.stringify(path), text: multiple ? "pick messages" : "pick",
      title: "then click messages in the conversation",
      onclick: () => startPicking(name, i, path, multiple),
    });
  }

  function chips(name, i, path) {
    const list = getValue(name, i, path);
    const box = el("div", { class: "chips" });
    for (const id of list) {
      box.append(el("span", { class: "chip", "data-id": id }, id, el("button", {
        type: "button", title: `remove ${id}`, text: "×",
        onclick: () => { list.splice(list.indexOf(id), 1); changed(name); renderFields(); renderPicking(); },
      })));
    }
    if (!list.length) box.append(el("span", { class: "empty", text: "none" }));
    box.append(pickButton(name, i, path, true));
    return box;
  }

  function widget(name, i, prop, path) {
    const value = getValue(name, i, path);
    const set = (v) => { setValue(name, i, path, v); refreshItem(name, i); };
    switch (prop.widget) {
      case "enum": {
        const select = el("select", { onchange: () => set(select.value), "aria-label": prop.label });
        for (const option of prop.values) select.append(el("option", { value: option, text: option.replace(/_/g, " ") }));
        select.value = value;
        return select;
      }
      case "speaker": return speakerSelect(value, prop.nullable, set);
      case "speakers": {
        const box = el("div", { class: "people" });
        for (const person of view.speakers) {
          const input = el("input", { type: "checkbox", checked: value.includes(person),
            onchange: () => {
              const current = getValue(name, i, path);
              set(view.speakers.filter((p) => (p === person ? input.checked : current.includes(p))));
            } });
          box.append(el("label", {}, input, " ", person));
        }
        return box;
      }
      case "evidence": return chips(name, i, path);
      case "message": return el("div", { class: "chips" }, messageSelect(value, set), pickButton(name, i, path, false));
      case "number": {
        const input = el("input", { type: "number", min: 0, max: 1, step: 0.05, value: value,
          onchange: () => set(input.value === "" ? 0.5 : Math.min(1, Math.max(0, Number(input.value)))) });
        return input;
      }
      case "subitems": {
        const box = el("div", {});
        value.forEach((sub, k) => {
          const row = el("div", { class: "sub" });
          for (const inner of prop.props) {
            row.append(el("div", { class: "prop" }, el("span", { class: "name", text: inner.label }), widget(name, i, inner, [...path, k, inner.name])));
          }
          row.append(el("button", { type: "button", class: "danger", text: "remove", onclick: () => { value.splice(k, 1); changed(name); renderFields(); } }));
          box.append(row);
        });
        box.append(el("button", { type: "button", text: `+ ${prop.label.replace(/s$/, "")}`, onclick: () => {
          const sub = {};
          for (const inner of prop.props) sub[inner.name] = defaultOf(inner);
          value.push(sub); changed(name); renderFields();
        } }));
        return box;
      }
      case "longtext": {
        const area = el("textarea", { rows: 2, value: value || "", "aria-label": prop.label, oninput: () => set(area.value) });
        return area;
      }
      default: {
        const input = el("input", { type: "text", value: value === null ? "" : value, "aria-label": prop.label,
          oninput: () => set(input.value === "" && prop.nullable ? null : input.value) });
        return input;
      }
    }
  }

  // ---- rendering -------------------------------------------------------------------------

  function itemCard(spec, i) {
    const name = spec.name;
    const item = fieldState(name).items[i];
    const status = statusOf(name, item);
    const card = el("div", { class: "item", "data-field": name, "data-index": i, "data-status": status,
      onclick: () => { if (!focus || focus.field !== name || focus.item !== i) { focus = { field: name, item: i }; markFocus(); renderPicking(); } } });
    const actions = el("span", { class: "actions" });
    if (status === "prefilled" || status === "edited") {
      actions.append(el("button", { type: "button", "data-action": "accept", text: status === "edited" ? "undo edits" : "accept", title: "accept as prefilled (a)", onclick: (e) => { e.stopPropagation(); accept(name, i); } }));
    }
    actions.append(el("button", { type: "button", class: "danger", "data-action": "delete", text: "delete", title: "delete (d)", onclick: (e) => { e.stopPropagation(); remove(name, i); } }));
    card.append(el("div", { class: "head" }, el("span", { class: `badge status-${status}`, text: status }), el("span", { class: "summary", text: `#${i + 1}` }), actions));
    if (spec.kind === "strings") {
      card.append(el("input", { type: "text", value: item.value, "aria-label": spec.label, oninput: (e) => { setValue(name, i, [], e.target.value); refreshItem(name, i); } }));
    } else if (spec.kind === "messages") {
      card.append(el("div", { class: "chips" }, el("span", { class: "chip", text: item.value })));
    } else if (spec.kind === "text") {
      card.append(el("textarea", { rows: 4, value: item.value, "aria-label": spec.label, oninput: (e) => { setValue(name, i, [], e.target.value); refreshItem(name, i); } }));
    } else {
      for (const prop of spec.props) {
        if (prop.widget === "hidden") continue;
        card.append(el("div", { class: "prop", "data-prop": prop.name }, el("span", { class: "name", text: prop.label }), widget(name, i, prop, [prop.name])));
      }
    }
    return card;
  }

  function refreshItem(name, i) {
    const card = document.querySelector(`.item[data-field="${name}"][data-index="${i}"]`);
    if (!card) return;
    const status = statusOf(name, fieldState(name).items[i]);
    if (card.dataset.status !== status) renderFields();
  }

  function fieldSection(spec) {
    const name = spec.name;
    const fs = fieldState(name);
    const inGold = (view.covers || []).includes(name);
    const reviewed = el("input", { type: "checkbox", checked: fs.reviewed, "data-action": "reviewed",
      onchange: () => { fs.reviewed = reviewed.checked; schedule(); renderFields(); } });
    const section = el("section", { class: `field${fs.reviewed ? " reviewed" : ""}`, "data-field": name, id: `field-${name}` });
    const single = spec.kind === "text" || spec.kind === "object";
    section.append(el("h2", {}, spec.label, el("span", { class: "count", text: `(${fs.items.length})` }),
      inGold ? el("span", { class: "badge gold", text: "in gold" }) : null,
      el("label", { title: "the field is reviewed: it goes into the gold file's covers (r)" }, reviewed, " reviewed")));
    fs.items.forEach((_, i) => section.append(itemCard(spec, i)));
    if (!fs.items.length) section.append(el("p", { class: "empty", text: view.prefill[name].length ? "every prefilled item deleted" : "nothing here yet" }));
    for (const p of fs.deleted) {
      section.append(el("div", { class: "deleted", "data-prefill": p }, "deleted: ", el("s", { text: summary(view.prefill[name][p]) }), " ",
        el("button", { type: "button", "data-action": "restore", text: "restore", onclick: () => restore(name, p) })));
    }
    if (!single || !fs.items.length) {
      const label = spec.kind === "messages" ? "+ add by clicking messages" : `+ add ${spec.label.replace(/s$/, "")}`;
      section.append(el("button", { type: "button", "data-action": "add", "data-field": name, text: label, onclick: () => add(name) }));
    }
    section.append(el("div", { class: "problems", "data-field": name }));
    return section;
  }

  function renderProblems() {
    for (const box of document.querySelectorAll(".problems")) box.textContent = "";
    for (const problem of view.problems || []) {
      const box = document.querySelector(`.problems[data-field="${problem.field}"]`);
      if (!box) continue;
      const where = problem.item === null ? "" : `item ${problem.item + 1}: `;
      box.append(el("p", { class: "problem", text: `not in the gold file yet — ${where}${problem.message}` }));
    }
    for (const section of document.querySelectorAll("section.field")) {
      const badge = section.querySelector(".badge.gold");
      const inGold = (view.covers || []).includes(section.dataset.field);
      if (inGold && !badge) section.querySelector("h2 .count").after(el("span", { class: "badge gold", text: "in gold" }));
      if (!inGold && badge) badge.remove();
    }
  }

  function renderFields() {
    const box = document.getElementById("fields");
    const active = document.activeElement;
    const keep = active && active.closest && active.closest(".item") ? { field: active.closest(".item").dataset.field, index: active.closest(".item").dataset.index, label: active.getAttribute("aria-label"), start: active.selectionStart } : null;
    box.textContent = "";
    for (const spec of session.fields) box.append(fieldSection(spec));
    const nav = document.getElementById("field-nav");
    nav.textContent = "";
    for (const spec of session.fields) {
      const fs = fieldState(spec.name);
      nav.append(el("a", { href: `#field-${spec.name}`, class: fs.reviewed ? "reviewed" : "",
        text: `${fs.reviewed ? "✓ " : ""}${spec.label} ${fs.items.length}`,
        onclick: (e) => { e.preventDefault(); document.getElementById(`field-${spec.name}`).scrollIntoView({ block: "start" }); } }));
    }
    renderProblems();
    markFocus();
    if (keep && keep.label) {
      const again = document.querySelector(`.item[data-field="${keep.field}"][data-index="${keep.index}"] [aria-label="${keep.label}"]`);
      if (again) { again.focus(); if (keep.start !== null && again.setSelectionRange) again.setSelectionRange(keep.start, keep.start); }
    }
  }

  function markFocus() {
    for (const node of document.querySelectorAll(".item.focus")) node.classList.remove("focus");
    if (!focus) return;
    const node = document.querySelector(`.item[data-field="${focus.field}"][data-index="${focus.item}"]`);
    if (node) node.classList.add("focus");
  }

  function renderMessages() {
    const chunk = view.chunk;
    document.getElementById("chunk-title").textContent = chunk.title || chunk.chunk_id;
    document.getElementById("chunk-meta").textContent = `${chunk.chunk_id} · ${chunk.conversation_id} · ${view.speakers.join(", ")}`;
    const list = document.getElementById("messages");
    list.textContent = "";
    for (const m of chunk.messages) {
      list.append(el("li", { class: "msg", "data-id": m.id, onclick: () => clickMessage(m.id) },
        el("span", { class: "who", text: m.speaker }),
        el("span", { class: "id", text: m.id }),
        m.timestamp ? el("span", { class: "time", text: m.timestamp }) : null,
        el("div", { class: "text", text: m.text })));
    }
  }

  function renderProgress() {
    const done = session.chunks.filter((c) => c.done).length;
    session.done = done;
    document.getElementById("progress-text").textContent = `${done} / ${session.total} chunks done`;
    document.getElementById("progress-fill").style.width = `${(100 * done) / Math.max(1, session.total)}%`;
    const jump = document.getElementById("jump");
    for (const option of jump.options) {
      const chunk = session.chunks[Number(option.value)];
      option.textContent = `${chunk.done ? "✓" : "·"} ${Number(option.value) + 1}. ${chunk.title || chunk.chunk_id}`;
    }
    jump.value = String(index);
  }

  async function load(target) {
    if (timer !== null) await flush();
    await pending;
    if (conflict !== null) { // leaving would drop this tab's unsaved changes
      setStatus("not saved: changed in another tab (choose above before leaving the chunk)", true);
      renderProgress();
      return;
    }
    index = Math.max(0, Math.min(session.total - 1, target));
    view = await api(`/api/chunks/${index}`);
    state = view.state;
    base = copy(state);
    conflict = null;
    renderConflict();
    focus = null;
    picking = null;
    renderMessages();
    renderFields();
    renderPicking();
    renderProgress();
    window.history.replaceState(null, "", `?token=${encodeURIComponent(token)}#${index}`);
    document.body.dataset.chunk = view.chunk.chunk_id;
    setStatus(state.updated_at ? `last saved ${state.updated_at}` : "nothing saved yet");
  }

  async function next() {
    state.done = true;
    session.chunks[index].done = true;
    await flush();
    if (index < session.total - 1) await load(index + 1);
    else renderProgress();
  }

  // ---- keys ------------------------------------------------------------------------------

  function moveFocus(step) {
    const cards = [...document.querySelectorAll(".item")];
    if (!cards.length) return;
    let at = focus ? cards.findIndex((c) => c.dataset.field === focus.field && Number(c.dataset.index) === focus.item) : -1;
    at = Math.max(0, Math.min(cards.length - 1, at + step));
    focus = { field: cards[at].dataset.field, item: Number(cards[at].dataset.index) };
    markFocus();
    renderPicking();
    cards[at].scrollIntoView({ block: "nearest" });
  }

  document.addEventListener("keydown", (event) => {
    if (!view) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); next(); return; }
    if (event.key === "Escape") { stopPicking(); return; }
    const tag = (event.target.tagName || "").toLowerCase();
    if (["input", "textarea", "select"].includes(tag) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j") moveFocus(1);
    else if (event.key === "k") moveFocus(-1);
    else if (event.key === "a" && focus) accept(focus.field, focus.item);
    else if (event.key === "d" && focus) remove(focus.field, focus.item);
    else if (event.key === "r" && focus) { const fs = fieldState(focus.field); fs.reviewed = !fs.reviewed; schedule(); renderFields(); }
    else if (event.key === "n") next();
    else if (event.key === "p") load(index - 1);
    else return;
    event.preventDefault();
  });

  window.addEventListener("beforeunload", () => { if (timer !== null) flush(); });

  // ---- start -----------------------------------------------------------------------------

  async function start() {
    try {
      session = await api("/api/session");
    } catch (error) {
      setStatus(`cannot start: ${error.message}`, true);
      return;
    }
    const jump = document.getElementById("jump");
    session.chunks.forEach((chunk, i) => jump.append(el("option", { value: String(i), text: chunk.chunk_id })));
    jump.addEventListener("change", () => load(Number(jump.value)));
    document.getElementById("prev").addEventListener("click", () => load(index - 1));
    document.getElementById("next").addEventListener("click", () => next());
    const fromHash = Number(window.location.hash.slice(1));
    const firstOpen = session.chunks.findIndex((c) => !c.done);
    await load(Number.isInteger(fromHash) && window.location.hash ? fromHash : Math.max(0, firstOpen));
    document.body.dataset.ready = "1";
  }

  start();
})();
