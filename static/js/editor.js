// Herald design editor: starts GrapesJS with the newsletter preset on the
// editor page (views/designs EditorPage) and saves the design. The page
// works without this file: its form posts the name and the HTML.
// Config kept off the network (static/vendor/grapesjs/README.md): no
// telemetry, no Font Awesome link, no local storage, no preset blocks
// with remote placeholder images.
(function () {
  "use strict";

  var form = document.querySelector("form[data-editor]");
  var dataEl = document.getElementById("editor-data");
  if (!form || !dataEl || !window.grapesjs) return;
  var data = JSON.parse(dataEl.textContent);

  var visual = document.getElementById("editor-visual");
  var htmlPane = document.getElementById("editor-html");
  var htmlArea = document.getElementById("design-html");
  var nameInput = document.getElementById("design-name");
  var status = document.getElementById("editor-status");
  var tabs = form.querySelector("[data-editor-tabs]");
  var mode = "visual";

  visual.hidden = false;
  htmlPane.hidden = true;
  tabs.hidden = false;

  var editor = window.grapesjs.init({
    container: "#gjs",
    height: "70vh",
    fromElement: false,
    telemetry: false,
    cssIcons: "",
    storageManager: false,
    plugins: ["grapesjs-preset-newsletter"],
    pluginsOpts: {
      "grapesjs-preset-newsletter": {
        blocks: ["sect100", "sect50", "sect30", "sect37", "button", "divider", "text", "text-sect", "image", "quote", "link", "link-block"],
      },
    },
  });
  window.heraldEditor = editor;

  // GrapesJS leaves its canvas frame unnamed and its side panel (which
  // scrolls) out of the keyboard's reach: name one, make the other
  // focusable (axe-core's frame-title and scrollable-region-focusable).
  editor.on("load", function () {
    document.querySelectorAll("#gjs .gjs-frame").forEach(function (f) {
      f.title = "Design canvas";
    });
    document.querySelectorAll("#gjs .gjs-pn-views-container").forEach(function (el) {
      el.tabIndex = 0;
      el.setAttribute("role", "region");
      el.setAttribute("aria-label", "Blocks, layers and styles");
    });
    keyboardButtons();
  });
  // GrapesJS's selector manager, shown once a block is chosen, has a
  // select of states without a name: it gets one.
  editor.on("component:toggled", function () {
    document.querySelectorAll("#gjs select:not([aria-label]):not([id^='merge'])").forEach(function (s) {
      if (s.labels && s.labels.length) return;
      s.setAttribute("aria-label", s.id === "gjs-clm-states" ? "State of the chosen block" : "Editor setting");
    });
  });

  // GrapesJS's panel buttons (devices, undo, the code view, the blocks,
  // layers and styles views…) are spans that listen to the mouse: each
  // becomes a button for the keyboard too (focusable, named by its
  // title, pressed by Enter or the space bar).
  function keyboardButtons() {
    document.querySelectorAll("#gjs .gjs-pn-btn:not([tabindex])").forEach(function (b) {
      b.tabIndex = 0;
      b.setAttribute("role", "button");
      if (!b.getAttribute("aria-label")) {
        b.setAttribute("aria-label", b.getAttribute("title") || b.getAttribute("data-tooltip") || "Editor command");
      }
    });
  }
  editor.on("component:toggled", keyboardButtons);
  document.addEventListener("keydown", function (e) {
    if ((e.key !== "Enter" && e.key !== " ") || !e.target.matches || !e.target.matches("#gjs .gjs-pn-btn")) return;
    e.preventDefault();
    e.target.click();
  });

  function loadHTML(html) {
    editor.setComponents(html || "");
  }

  if (data.template_json) {
    try {
      editor.loadProjectData(JSON.parse(data.template_json));
    } catch (err) {
      loadHTML(data.template_html);
    }
  } else {
    loadHTML(data.template_html);
  }

  function escapeHTML(s) {
    return s.replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c];
    });
  }

  // documentOf wraps the preset's inlined HTML (a <body> fragment) into a
  // whole document, as the library designs are.
  function documentOf(inlined) {
    var body = inlined.trim();
    if (!/^<body[\s>]/i.test(body)) body = "<body>" + body + "</body>";
    return (
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
      "<title>" + escapeHTML(nameInput.value) + "</title>\n</head>\n" + body + "\n</html>\n"
    );
  }

  // Merge tags: the placeholders the server listed for the account
  // (data.merge_tags, by group), each with the HTML it inserts (the
  // placeholder, or a link or an image made of it).
  var tags = {};
  (data.merge_tags || []).forEach(function (g) {
    g.tags.forEach(function (t) {
      tags[t.tag] = t;
    });
  });
  var words = data.words || {};

  function announce(name) {
    say("success", (words.inserted || "{{.Name}} inserted.").replace("{{.Name}}", name));
  }

  // stopEditing ends the editing of a text, as a click elsewhere does, so
  // that what was typed is in the design before it is read.
  function stopEditing() {
    var c = editor.getEditing();
    if (c) c.trigger("disable");
  }

  // insertComponent adds def (HTML or a component definition) after the
  // chosen block, or at the end of the design when none is chosen, then
  // chooses what was added.
  function insertComponent(def) {
    stopEditing();
    var sel = editor.getSelected();
    var added;
    if (sel && sel.parent()) {
      added = sel.parent().append(def, { at: sel.index() + 1 });
    } else {
      added = editor.getWrapper().append(def);
    }
    var first = Array.isArray(added) ? added[0] : added;
    if (first) editor.select(first);
    return first;
  }

  // insertTag puts a merge tag where the cursor is in the text being
  // edited, or as a new text after the chosen block.
  function insertTag(value) {
    var t = tags[value];
    if (!t) return;
    var rte = editor.RichTextEditor.globalRte;
    if (editor.getEditing() && rte) {
      rte.insertHTML(t.insert);
    } else {
      insertComponent({ type: "text", components: t.insert });
    }
    announce(t.tag);
  }

  // The picker inside the canvas: a select in the text toolbar, shown
  // while a text is edited; choosing a tag inserts it at the cursor.
  function tagSelectHTML() {
    var out = '<select class="gjs-field rte-merge-tag" aria-label="' + escapeHTML(words.pick_label || "Insert a merge tag") + '">';
    out += '<option value="">' + escapeHTML(words.pick || "Merge tag…") + "</option>";
    (data.merge_tags || []).forEach(function (g) {
      out += '<optgroup label="' + escapeHTML(g.label) + '">';
      g.tags.forEach(function (t) {
        out += '<option value="' + escapeHTML(t.tag) + '">' + escapeHTML(t.label) + "</option>";
      });
      out += "</optgroup>";
    });
    return out + "</select>";
  }
  if (data.merge_tags && data.merge_tags.length) {
    editor.RichTextEditor.add("merge-tag", {
      icon: tagSelectHTML(),
      event: "change",
      attributes: { title: words.pick_label || "Insert a merge tag", class: "rte-merge-tag-action" },
      result: function (rte, action) {
        var select = action.btn.querySelector("select");
        var t = tags[select.value];
        if (t) {
          rte.insertHTML(t.insert);
          announce(t.tag);
        }
        select.value = "";
      },
      update: function (rte, action) {
        var select = action.btn.querySelector("select");
        if (select) select.value = "";
      },
    });
  }

  // The tools beside the canvas: the same picker (for the keyboard and
  // small screens), and the saved blocks.
  var tools = document.querySelector("[data-editor-tools]");
  if (tools) {
    tools.hidden = false;
    var pick = document.getElementById("merge-tag-pick");
    var pickButton = document.getElementById("merge-tag-insert");
    if (pick && pickButton) {
      pickButton.addEventListener("click", function () {
        insertTag(pick.value);
      });
    }
    // Inserting a saved block: its markup and styles are fetched (the
    // page lists names only), then added after the chosen block.
    tools.addEventListener("click", function (e) {
      var b = e.target.closest("[data-block-insert]");
      if (!b) return;
      b.disabled = true;
      fetch(b.getAttribute("data-block-insert"), { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (resp) {
          if (!resp.ok) throw new Error(resp.status);
          return resp.json();
        })
        .then(function (block) {
          b.disabled = false;
          var added = insertComponent(block.html);
          if (block.css) editor.addStyle(block.css);
          if (added) announce(block.name);
        })
        .catch(function () {
          b.disabled = false;
          say("error", words.block_failed || "The block could not be read. Reload the page and try again.");
        });
    });
    // Saving a block: the chosen block's HTML and its style rules go in
    // the form's hidden fields before htmx reads the form (this listener
    // runs first: it listens on the document, capturing). Nothing
    // chosen: nothing is sent, and the form says why.
    document.addEventListener("submit", function (e) {
      var f = e.target;
      if (!f || f.id !== "block-save-form") return;
      stopEditing();
      var sel = editor.getSelected();
      if (!sel || sel === editor.getWrapper()) {
        e.preventDefault();
        e.stopPropagation();
        say("error", words.choose_block || "Choose a block in the canvas first.");
        return;
      }
      f.querySelector('[name="html"]').value = sel.toHTML();
      f.querySelector('[name="css"]').value = editor.getCss({ component: sel, avoidProtected: true }) || "";
    }, true);
  }

  function setTab(next) {
    if (next === mode) return;
    if (next === "html") {
      stopEditing();
      htmlArea.value = documentOf(editor.runCommand("gjs-get-inlined-html"));
    } else {
      loadHTML(htmlArea.value);
    }
    mode = next;
    if (tools) tools.hidden = mode !== "visual";
    visual.hidden = mode !== "visual";
    htmlPane.hidden = mode !== "html";
    tabs.querySelectorAll("[data-editor-tab]").forEach(function (t) {
      var on = t.getAttribute("data-editor-tab") === mode;
      t.classList.toggle("is-active", on);
      t.setAttribute("aria-selected", on ? "true" : "false");
    });
  }

  tabs.addEventListener("click", function (e) {
    var t = e.target.closest("[data-editor-tab]");
    if (t) setTab(t.getAttribute("data-editor-tab"));
  });

  function say(kind, text) {
    status.className = "editor-status flash flash-" + kind;
    status.textContent = text;
  }

  function showErrors(errors) {
    form.querySelectorAll(".field-errors[data-editor-error]").forEach(function (el) {
      el.remove();
    });
    Object.keys(errors || {}).forEach(function (field) {
      var input = form.querySelector('[name="' + field + '"]');
      var box = document.createElement("ul");
      box.className = "field-errors";
      box.setAttribute("data-editor-error", "");
      errors[field].forEach(function (m) {
        var li = document.createElement("li");
        li.textContent = m;
        box.appendChild(li);
      });
      if (input && input.type !== "hidden" && !(input === htmlArea && mode === "visual")) {
        input.closest(".field").appendChild(box);
      } else {
        status.after(box);
      }
    });
  }

  // Save: the editor's project JSON and inlined HTML (visual tab), or
  // the HTML alone (HTML tab: the JSON is emptied), posted with the
  // session's CSRF token in the X-CSRF-Token header.
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    if (mode === "visual") stopEditing();
    var body = new URLSearchParams();
    body.set("name", nameInput.value);
    body.set("template_id", form.querySelector('[name="template_id"]').value);
    if (mode === "visual") {
      body.set("template_json", JSON.stringify(editor.getProjectData()));
      body.set("template_html", documentOf(editor.runCommand("gjs-get-inlined-html")));
    } else {
      body.set("template_json", "");
      body.set("template_html", htmlArea.value);
    }
    var token = form.querySelector('[name="_csrf"]').value;
    var button = document.getElementById("design-save");
    button.disabled = true;
    say("info", "Saving…");
    fetch(data.save_url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Accept": "application/json", "X-CSRF-Token": token },
      body: body,
    })
      .then(function (resp) {
        return resp.json().then(function (answer) {
          return { ok: resp.ok, answer: answer };
        });
      })
      .then(function (r) {
        button.disabled = false;
        showErrors(r.answer.errors);
        if (!r.ok) {
          say("error", r.answer.message || "The design could not be saved.");
          return;
        }
        if (!data.id) {
          window.location.assign(r.answer.url);
          return;
        }
        say("success", r.answer.message);
      })
      .catch(function () {
        button.disabled = false;
        say("error", "The design could not be saved: the server did not answer. Try again.");
      });
  });
})();
