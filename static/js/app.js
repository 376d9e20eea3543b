// Herald console behaviour: small enhancements over pages that work
// without it. htmx (vendored) does the requests; this file only adds the
// menu drawer, flash dismissal, row selection, key copying, confirmation
// of plain forms, placeholder insertion, upload progress, and error
// messages for failed htmx requests.
// No inline scripts: the Content-Security-Policy forbids them.
(function () {
  "use strict";

  // --- Menu drawer (phones). Without JS the menu link opens the drawer
  // through :target; with JS a class does, and Escape closes it. Opening
  // it moves the focus to its first link; closing it (Escape, the close
  // button, or Tab past its end) gives the focus back to the menu button
  // when the focus was in the drawer, which hides.
  function setNav(open) {
    var sidebar = document.getElementById("sidebar");
    if (!sidebar) return;
    var wasOpen = sidebar.classList.contains("is-open");
    var focusInside = sidebar.contains(document.activeElement);
    sidebar.classList.toggle("is-open", open);
    document.body.classList.toggle("nav-open", open);
    document.querySelectorAll("[data-nav-toggle]").forEach(function (t) {
      t.setAttribute("aria-expanded", open ? "true" : "false");
    });
    if (open) {
      var first = sidebar.querySelector(".nav-link[href]");
      if (first) first.focus();
    } else if (wasOpen && focusInside) {
      var toggle = document.querySelector("[data-nav-toggle]");
      if (toggle) toggle.focus();
    }
  }

  // Tab past the drawer's last link (or Shift+Tab before its first)
  // closes it: the page behind it is where the focus goes.
  document.addEventListener("focusout", function (e) {
    var sidebar = document.getElementById("sidebar");
    if (!sidebar || !sidebar.classList.contains("is-open") || !sidebar.contains(e.target)) return;
    var to = e.relatedTarget;
    if (to && !sidebar.contains(to) && !to.matches("[data-nav-toggle]")) {
      sidebar.classList.remove("is-open");
      document.body.classList.remove("nav-open");
      document.querySelectorAll("[data-nav-toggle]").forEach(function (t) {
        t.setAttribute("aria-expanded", "false");
      });
    }
  });

  // A link that plays a button (role="button": the menu's open and close
  // links, which are links so that the menu works without JS) answers the
  // space bar as a button does.
  document.addEventListener("keydown", function (e) {
    if (e.key !== " " || e.defaultPrevented || !e.target.matches || !e.target.matches('a[role="button"]')) return;
    e.preventDefault();
    e.target.click();
  });

  document.addEventListener("click", function (e) {
    var toggle = e.target.closest("[data-nav-toggle]");
    if (toggle) {
      e.preventDefault();
      var sidebar = document.getElementById("sidebar");
      setNav(!(sidebar && sidebar.classList.contains("is-open")));
      return;
    }
    if (e.target.closest("[data-nav-close]")) {
      e.preventDefault();
      setNav(false);
      return;
    }
    var dismiss = e.target.closest("[data-dismiss]");
    if (dismiss) {
      var flash = dismiss.closest("[data-flash]");
      if (flash) flash.remove();
      return;
    }
    var copy = e.target.closest("[data-copy]");
    if (copy) {
      copyFrom(copy);
    }
  });

  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && document.body.classList.contains("nav-open")) {
      setNav(false);
    }
  });

  // --- Copy an API key to the clipboard.
  // textOf is what a copy button copies: an input's value, or the text
  // of a code block.
  function textOf(el) {
    return typeof el.select === "function" ? el.value : el.textContent;
  }

  // selectText selects what a copy button copies, for the person to copy
  // by hand when the clipboard is out of reach (plain http).
  function selectText(el) {
    if (typeof el.select === "function") {
      el.select();
      return;
    }
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  function copyFrom(button) {
    var input = document.querySelector(button.getAttribute("data-copy"));
    if (!input) return;
    var label = button.querySelector("span");
    var done = function () {
      if (!label) return;
      var old = label.textContent;
      label.textContent = "Copied";
      button.classList.add("is-done");
      setTimeout(function () {
        label.textContent = old;
        button.classList.remove("is-done");
      }, 1800);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(textOf(input)).then(done, function () {
        selectText(input);
      });
    } else {
      selectText(input);
      try {
        document.execCommand("copy");
        done();
      } catch (err) {
        /* the text stays selected for the person to copy */
      }
    }
  }

  // --- Row selection: "select all" and the bulk delete button.
  function syncSelection(form) {
    if (!form) return;
    var boxes = form.querySelectorAll('input[type="checkbox"][name="ids"]');
    var checked = form.querySelectorAll('input[type="checkbox"][name="ids"]:checked');
    var all = form.querySelector("[data-select-all]");
    if (all) {
      all.checked = boxes.length > 0 && checked.length === boxes.length;
      all.indeterminate = checked.length > 0 && checked.length < boxes.length;
    }
    var bulk = form.querySelector("[data-bulk-delete], [data-bulk-lift]");
    if (bulk) {
      bulk.disabled = checked.length === 0;
      var label = bulk.querySelector("span");
      if (label) {
        var base = label.textContent.replace(/ \(\d+\)$/, "");
        label.textContent = checked.length > 0 ? base + " (" + checked.length + ")" : base;
      }
    }
    form.querySelectorAll("tbody tr").forEach(function (tr) {
      var box = tr.querySelector('input[name="ids"]');
      tr.classList.toggle("is-selected", !!(box && box.checked));
    });
  }

  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t.matches("[data-select-all]")) {
      var form = t.closest("form");
      form.querySelectorAll('input[type="checkbox"][name="ids"]').forEach(function (b) {
        b.checked = t.checked;
      });
      syncSelection(form);
    } else if (t.matches('input[type="checkbox"][name="ids"]')) {
      syncSelection(t.closest("form"));
    }
  });

  // --- Confirmation of plain (non-htmx) forms, e.g. rotating keys.
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (e.defaultPrevented) return; // htmx took it (and asks with hx-confirm)
    var question = form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      e.preventDefault();
    }
  });

  // --- Placeholders: a select beside a field inserts ((name)) at the
  // cursor, then goes back to its prompt.
  document.addEventListener("change", function (e) {
    var pick = e.target;
    if (!pick.matches || !pick.matches("select[data-insert-into]") || !pick.value) return;
    var field = document.querySelector(pick.getAttribute("data-insert-into"));
    var text = pick.value;
    pick.value = "";
    if (!field) return;
    var start = typeof field.selectionStart === "number" ? field.selectionStart : field.value.length;
    var end = typeof field.selectionEnd === "number" ? field.selectionEnd : start;
    field.value = field.value.slice(0, start) + text + field.value.slice(end);
    field.focus();
    field.setSelectionRange(start + text.length, start + text.length);
    field.dispatchEvent(new Event("input", { bubbles: true }));
  });

  // --- Enter in a field that belongs to another button than the form's
  // (the test address of a single send) presses that button.
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Enter" || !e.target.matches || !e.target.matches("[data-enter-clicks]")) return;
    var button = document.querySelector(e.target.getAttribute("data-enter-clicks"));
    if (button) {
      e.preventDefault();
      button.click();
    }
  });

  // --- A single send saved to go now starts mailing at once: ask first.
  var sendNowQuestion = "Save and send now? The mail starts going out within seconds.";
  function sendsNow(form) {
    var now = form.querySelector("#send-now");
    return !!(now && now.checked);
  }
  // The question is asked only of a form that would save: a dry run
  // (/single-sends/validate, nothing saved) comes first, and a form it
  // refuses is posted without asking, to come back with its messages.
  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"] || "";
    } catch (err) {
      return "";
    }
  }
  document.addEventListener("htmx:confirm", function (e) {
    var elt = e.detail.elt;
    if (!elt.matches || !elt.matches("form[data-send-form]") || !sendsNow(elt)) return;
    if (e.detail.verb !== "post" || (e.detail.path || "").indexOf("/single-sends/test") >= 0) return;
    e.preventDefault();
    fetch("/single-sends/validate", {
      method: "POST",
      body: new URLSearchParams(new FormData(elt)),
      headers: { "X-CSRF-Token": csrfToken() },
      credentials: "same-origin",
    }).then(function (r) {
      if (r.status !== 204) {
        e.detail.issueRequest(true); // the answer shows what is wrong
        return;
      }
      if (window.confirm(sendNowQuestion)) e.detail.issueRequest(true);
    }, function () {
      if (window.confirm(sendNowQuestion)) e.detail.issueRequest(true);
    });
  });

  // --- A field's messages go once it is changed: they spoke of the value
  // it had, and stay until the form is checked again.
  function clearFieldErrors(e) {
    var field = e.target.closest && e.target.closest(".field.has-error, fieldset.has-error");
    if (!field) return;
    field.classList.remove("has-error");
    field.querySelectorAll(".field-errors").forEach(function (ul) { ul.remove(); });
    field.querySelectorAll('[aria-invalid="true"]').forEach(function (c) { c.removeAttribute("aria-invalid"); });
  }
  document.addEventListener("input", clearFieldErrors);
  document.addEventListener("change", clearFieldErrors);
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (e.defaultPrevented || !form.matches("form[data-send-form]")) return;
    var by = e.submitter;
    if (by && by.hasAttribute("formaction")) return; // the test, not the save
    if (sendsNow(form) && !window.confirm(sendNowQuestion)) e.preventDefault();
  });

  // --- Upload progress of a file sent through htmx (the CSV import): the
  // bar fills as the browser sends the file; the server's own progress
  // panel takes over once it has it all.
  document.addEventListener("htmx:xhr:progress", function (e) {
    var form = e.target.closest && e.target.closest("[data-upload]");
    if (!form) return;
    var box = form.querySelector("[data-upload-progress]");
    if (!box) return;
    box.hidden = false;
    var bar = box.querySelector("progress");
    var label = box.querySelector("[data-upload-text]");
    var d = e.detail;
    if (d.lengthComputable && d.total > 0) {
      var pc = Math.floor((d.loaded * 100) / d.total);
      if (bar) bar.value = pc;
      if (label) label.textContent = pc < 100 ? "Uploading… " + pc + "%" : "Uploaded. Starting the import…";
    }
  });

  // --- CSV import preview: once a file is chosen, its first rows are
  // read here (the file itself is still streamed to the server whole) and
  // each column gets a field to fill, preset from its header: a reserved
  // or custom field, "Leave out", or a new custom field. The choices go
  // with the upload as column[i], new_name[i], new_type[i].
  var previewRows = 5;

  function sniffDelimiter(line) {
    var counts = { ",": 0, ";": 0, "\t": 0 }, quoted = false;
    for (var i = 0; i < line.length; i++) {
      var c = line[i];
      if (c === '"') quoted = !quoted;
      else if (!quoted && c in counts) counts[c]++;
    }
    var best = ",";
    [";", "\t"].forEach(function (c) { if (counts[c] > counts[best]) best = c; });
    return best;
  }

  // parseCSV reads up to max records of text (RFC 4180 quoting).
  function parseCSV(text, sep, max) {
    var rows = [], row = [], cell = "", quoted = false, i = 0;
    while (i < text.length && rows.length < max) {
      var c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') { cell += '"'; i += 2; continue; }
        if (c === '"') { quoted = false; i++; continue; }
        cell += c; i++; continue;
      }
      if (c === '"') { quoted = true; i++; continue; }
      if (c === sep) { row.push(cell); cell = ""; i++; continue; }
      if (c === "\r" || c === "\n") {
        row.push(cell); rows.push(row); row = []; cell = "";
        if (c === "\r" && text[i + 1] === "\n") i++;
        i++; continue;
      }
      cell += c; i++;
    }
    if ((cell !== "" || row.length > 0) && rows.length < max) { row.push(cell); rows.push(row); }
    return rows;
  }

  function normalizeName(h) { return h.trim().toLowerCase().split(/\s+/).join("_"); }

  // fieldKey is a header reduced for matching: "E-Mail", "e_mail" and
  // "E Mail" all read "email".
  function fieldKey(h) { return h.trim().toLowerCase().normalize("NFD").replace(/[\u0300-\u036f]/g, "").replace(/[^a-z0-9]/g, ""); }

  // Other names the fields go by in files people export from elsewhere
  // (other tools, spreadsheets in other languages), by fieldKey.
  var fieldAliases = {
    email: ["mail", "emailaddress", "emailadresse", "adresseemail", "courriel", "correo", "correoelectronico"],
    first_name: ["first", "firstname", "givenname", "forename", "vorname", "prenom", "nombre", "nome", "voornaam"],
    last_name: ["last", "lastname", "surname", "familyname", "nachname", "nom", "apellido", "apellidos", "cognome", "achternaam"],
    postal_code: ["zip", "zipcode", "postcode", "plz", "codepostal", "cp"],
    city: ["town", "stadt", "ville", "ciudad", "citta"],
    country: ["land", "pays", "pais", "paese"],
    state: ["province", "region"],
    address_line1: ["address", "street", "address1", "strasse", "adresse", "direccion"],
    address_line2: ["address2"],
    tags: ["tag", "labels", "label"]
  };

  // guessType is the custom field type the sample values suggest.
  function guessType(values) {
    var seen = values.filter(function (v) { return v.trim() !== ""; });
    if (seen.length === 0) return "text";
    if (seen.every(function (v) { return /^-?\d+([.,]\d+)?$/.test(v.trim()); })) return "number";
    if (seen.every(function (v) { return /^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?$/.test(v.trim()); })) return "datetime-local";
    return "text";
  }

  // suggestColumns chooses, for each column, the field its header names
  // (by name, label or a common alias), else email for a column of
  // addresses, else a new custom field named after the header with the
  // type its values suggest; a column without a header is left out.
  // A field is suggested for one column only.
  function suggestColumns(choices, header, rows) {
    var byKey = {};
    Array.prototype.forEach.call(choices.querySelectorAll("option"), function (o) {
      if (o.value === "-" || o.value === "+new") return;
      byKey[fieldKey(o.value)] = o.value;
      byKey[fieldKey(o.textContent)] = byKey[fieldKey(o.textContent)] || o.value;
    });
    Object.keys(fieldAliases).forEach(function (f) {
      if (!choices.querySelector('option[value="' + f + '"]')) return;
      fieldAliases[f].forEach(function (a) { if (!(a in byKey)) byKey[a] = f; });
    });
    var taken = {};
    var out = header.map(function (h) {
      var f = byKey[fieldKey(h || "")];
      if (f && !taken[f]) { taken[f] = true; return { field: f }; }
      return null;
    });
    return out.map(function (s, i) {
      if (s) return s;
      var values = rows.map(function (r) { return r[i] == null ? "" : r[i]; });
      var filled = values.filter(function (v) { return v.trim() !== ""; });
      if (!taken.email && filled.length > 0 && filled.every(function (v) { return /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v.trim()); })) {
        taken.email = true;
        return { field: "email" };
      }
      var name = normalizeName(header[i] || "").normalize("NFD").replace(/[\u0300-\u036f]/g, "").replace(/[^a-z0-9_]/g, "");
      if (name === "") return { field: "-" };
      return { field: "+new", name: name, type: guessType(values) };
    });
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text != null) e.textContent = text;
    return e;
  }

  function columnControls(choices, i, header, suggestion) {
    var box = el("div", { class: "import-column" });
    var id = "import-col-" + i;
    box.appendChild(el("label", { for: id, class: "import-column-name" }, header || "Column " + (i + 1)));
    var sel = el("select", { id: id, name: "column[" + i + "]" });
    Array.prototype.forEach.call(choices.children, function (c) { sel.appendChild(c.cloneNode(true)); });
    sel.value = suggestion.field;
    box.appendChild(sel);
    var extra = el("div", { class: "import-column-new" });
    var nameInput = el("input", { type: "text", name: "new_name[" + i + "]", "aria-label": "Name of the new field for column " + (i + 1), value: suggestion.name || normalizeName(header || "").replace(/[^a-z0-9_]/g, "") });
    var typeSel = el("select", { name: "new_type[" + i + "]", "aria-label": "Type of the new field for column " + (i + 1) });
    [["text", "Text"], ["number", "Number"], ["datetime-local", "Date and time"]].forEach(function (t) {
      typeSel.appendChild(el("option", { value: t[0] }, t[1]));
    });
    typeSel.value = suggestion.type || "text";
    extra.appendChild(nameInput);
    extra.appendChild(typeSel);
    function sync() {
      var isNew = sel.value === "+new";
      extra.hidden = !isNew;
      nameInput.disabled = typeSel.disabled = !isNew; // sent only for a new field
    }
    sel.addEventListener("change", sync);
    sync();
    box.appendChild(extra);
    return box;
  }

  function showPreview(form, file) {
    var box = form.querySelector("[data-import-preview]");
    var table = form.querySelector("[data-import-preview-table]");
    var choices = form.querySelector("#import-field-choices");
    if (!box || !table || !choices) return;
    table.textContent = "";
    box.hidden = true;
    if (!file) return;
    file.slice(0, 64 * 1024).text().then(function (text) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      var sep = sniffDelimiter(text.split(/\r?\n/, 1)[0]);
      var rows = parseCSV(text, sep, previewRows + 1);
      if (rows.length === 0) return;
      var header = rows[0];
      var suggestions = suggestColumns(choices, header, rows.slice(1));
      var thead = el("thead"), tr = el("tr");
      header.forEach(function (h, i) {
        var th = el("th", { scope: "col" });
        th.appendChild(columnControls(choices, i, h, suggestions[i]));
        tr.appendChild(th);
      });
      thead.appendChild(tr);
      table.appendChild(thead);
      var tbody = el("tbody");
      rows.slice(1).forEach(function (r) {
        var tr = el("tr");
        header.forEach(function (_, i) { tr.appendChild(el("td", {}, r[i] == null ? "" : r[i])); });
        tbody.appendChild(tr);
      });
      table.appendChild(tbody);
      var names = { ",": "commas", ";": "semicolons", "\t": "tabs" };
      var summary = box.querySelector("[data-import-preview-summary]");
      if (summary) {
        var fresh = suggestions.filter(function (s) { return s.field === "+new"; }).length;
        summary.textContent = header.length + " columns separated by " + names[sep] + "; the first " +
          Math.max(rows.length - 1, 0) + " rows below. Choose what each column fills." +
          (fresh > 0 ? " Columns no field matched are suggested as new custom fields; choose Leave out to skip one." : "");
      }
      box.hidden = false;
    });
  }

  document.addEventListener("change", function (e) {
    var input = e.target;
    if (!input.matches || !input.matches('[data-upload] input[type="file"]')) return;
    showPreview(input.closest("[data-upload]"), input.files && input.files[0]);
  });

  // --- Flash messages written from here (htmx failures).
  function showFlash(kind, text) {
    var area = document.getElementById("flash");
    if (!area) return;
    var box = document.createElement("div");
    box.className = "flash flash-" + kind;
    box.setAttribute("role", kind === "error" ? "alert" : "status");
    box.setAttribute("data-flash", "");
    var p = document.createElement("p");
    p.textContent = text;
    var close = document.createElement("button");
    close.type = "button";
    close.className = "flash-close";
    close.setAttribute("data-dismiss", "");
    close.setAttribute("aria-label", "Dismiss");
    close.textContent = "\u00d7";
    box.appendChild(p);
    box.appendChild(close);
    area.replaceChildren(box);
  }

  // Success messages fade after a while; errors stay until dismissed.
  function autoDismiss(root) {
    root.querySelectorAll(".flash-success[data-flash]").forEach(function (f) {
      if (f.dataset.timer) return;
      f.dataset.timer = "1";
      setTimeout(function () {
        f.classList.add("is-leaving");
        setTimeout(function () {
          f.remove();
        }, 400);
      }, 6000);
    });
  }

  // The console answers its own errors with a message retargeted to the
  // flash area (HX-Retarget); an error without it (a proxy, a crash) must
  // not be swapped into the page.
  document.addEventListener("htmx:beforeSwap", function (e) {
    var d = e.detail;
    if (d.isError && !d.xhr.getResponseHeader("HX-Retarget")) {
      d.shouldSwap = false;
      showFlash("error", "Something went wrong (" + d.xhr.status + "). Reload the page and try again.");
    }
  });

  // --- The focus after a swap. When htmx replaces or removes the element
  // that had the focus (a row deleted by its own button, a form answered
  // by a new one) and does not put the focus back itself (it does for an
  // element with the same id), the focus would fall to the start of the
  // page and the next Tab with it. It goes to the swapped area instead
  // (the new element of the same id, or the nearest container still on the
  // page), so the next Tab carries on from there; a form that came back
  // refused puts it on its first field in error.
  var focusHome = null;
  document.addEventListener("htmx:beforeSwap", function (e) {
    var t = e.detail.target, a = document.activeElement;
    focusHome = null;
    if (t && a && a !== document.body && t.contains(a)) focusHome = { id: t.id, parent: t.parentElement };
  });
  document.addEventListener("htmx:afterSettle", function () {
    var home = focusHome, a = document.activeElement;
    focusHome = null;
    if (!home || (a && a !== document.body && a.isConnected)) return;
    var el = (home.id && document.getElementById(home.id)) || home.parent;
    while (el && !el.isConnected) el = el.parentElement;
    if (!el || el === document.body || el === document.documentElement) el = document.getElementById("main");
    if (!el) return;
    var bad = el.querySelector('[aria-invalid="true"]');
    if (bad) el = bad;
    else if (!el.matches("a[href], button, input, select, textarea, [tabindex]")) el.setAttribute("tabindex", "-1");
    el.focus({ preventScroll: true });
  });

  document.addEventListener("htmx:sendError", function () {
    showFlash("error", "Could not reach the server. Check your connection and try again.");
  });

  function init(root) {
    (root.querySelectorAll ? root : document).querySelectorAll("form").forEach(function (f) {
      if (f.querySelector("[data-select-all]")) syncSelection(f);
    });
    if (root.matches && root.matches("form") && root.querySelector("[data-select-all]")) {
      syncSelection(root);
    }
    autoDismiss(document);
  }

  // --- An Enter whose keydown pressed another button (data-enter-clicks)
  // must not also submit the form as its default button: the contact
  // list's default button deletes the selection, and its tags field
  // presses "Add tags". A keypress that comes without its keydown (a
  // synthetic key) is stopped here too.
  document.addEventListener("keypress", function (e) {
    if (e.key === "Enter" && e.target.matches && e.target.matches("[data-enter-clicks]")) {
      e.preventDefault();
    }
  });

  document.addEventListener("htmx:load", function (e) {
    init(e.target);
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () {
      init(document);
    });
  } else {
    init(document);
  }
})();
