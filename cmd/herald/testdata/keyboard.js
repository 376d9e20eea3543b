// The keyboard audit of the browser tests (browser_keyboard_test.go),
// added to every page through the DevTools protocol (not served by the
// console; the page's Content-Security-Policy does not apply to it).
//
// It records every focus move of the top document with what the person
// sees: whether the focused element is visible, and whether focusing it
// changed its outline or box-shadow (or those of the label or sibling that
// shows its state, for a visually hidden radio or checkbox) to a visible
// one. It also lists the elements that act on a click (or show a pointer)
// but take no focus, and the elements the Tab key should reach; it tells
// where the focus is after each key (now), which the test reads.
(function () {
  "use strict";
  if (window.__kb) return;
  var kb = (window.__kb = { log: [], els: new Map(), ids: new WeakMap(), n: 0, pending: null });

  function id(el) {
    if (!kb.ids.has(el)) {
      kb.ids.set(el, ++kb.n);
      kb.els.set(kb.n, el);
    }
    return kb.ids.get(el);
  }

  function describe(el) {
    var s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (el.getAttribute("name")) s += '[name="' + el.getAttribute("name") + '"]';
    if (el.getAttribute("type") && el.tagName === "INPUT") s += '[type="' + el.getAttribute("type") + '"]';
    if (el.getAttribute("href")) s += '[href="' + el.getAttribute("href") + '"]';
    var cls = (el.getAttribute("class") || "").trim().split(/\s+/).filter(Boolean).slice(0, 2);
    if (cls.length) s += "." + cls.join(".");
    var text = (el.getAttribute("aria-label") || el.textContent || el.value || "").replace(/\s+/g, " ").trim();
    if (text) s += ' "' + text.slice(0, 40) + '"';
    return s;
  }

  // visible: displayed, not transparent, with a box, and on the page (not
  // pushed off it, as a closed drawer is).
  function visible(el) {
    if (!el.isConnected || !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
    var r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return false;
    var left = r.left + scrollX, top = r.top + scrollY;
    return left + r.width > 0 && top + r.height > 0 && left < document.documentElement.scrollWidth;
  }

  // shows: the element is visible, or it is a visually hidden radio or
  // checkbox whose label (or the element after it) is.
  function shows(el) {
    if (visible(el)) return true;
    if (el.tagName !== "INPUT" || (el.type !== "radio" && el.type !== "checkbox")) return false;
    return boxes(el).slice(1).some(visible);
  }

  // The key of a Tab stop: a group of radios is one stop.
  function key(el) {
    if (el.tagName === "INPUT" && el.type === "radio" && el.name) {
      var scope = el.form ? "form" + id(el.form) : "doc";
      return "radio:" + scope + ":" + el.name;
    }
    return "el:" + id(el);
  }

  // The boxes that may show an element's focus: its own, and for a
  // visually hidden input the label around it or the element after it.
  function boxes(el) {
    var out = [el];
    [el.nextElementSibling, el.closest("label")].concat(Array.prototype.slice.call(el.labels || [])).forEach(function (c) {
      if (c && out.indexOf(c) < 0) out.push(c);
    });
    return out;
  }

  function finish(el) {
    boxes(el).forEach(function (c) {
      c.getAnimations().forEach(function (a) {
        try { a.finish(); } catch (e) { /* an infinite one */ }
      });
    });
  }

  function transparent(color) {
    return /rgba\([^)]*,\s*0\)$/.test(color) || color === "transparent";
  }

  function look(c) {
    var cs = getComputedStyle(c);
    var outline = cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) > 0 && !transparent(cs.outlineColor);
    var shadow = cs.boxShadow !== "none";
    return { text: [cs.outlineStyle, cs.outlineWidth, cs.outlineColor, cs.boxShadow].join("|"), shown: outline || shadow };
  }

  document.addEventListener("focusin", function (e) {
    var el = e.target;
    if (!(el instanceof Element)) return;
    finish(el);
    var entry = { id: id(el), key: key(el), desc: describe(el), visible: shows(el), frame: el.tagName === "IFRAME", ring: null };
    kb.log.push(entry);
    kb.pending = { el: el, entry: entry, looks: boxes(el).map(function (c) { return [c, look(c)]; }) };
  }, true);

  document.addEventListener("focusout", function (e) {
    var p = kb.pending;
    if (!p || p.el !== e.target) return;
    kb.pending = null;
    finish(p.el);
    // The focus indicator: a box whose outline or shadow is shown while
    // focused and changes when the focus goes.
    p.entry.ring = p.looks.some(function (pair) {
      return pair[1].shown && look(pair[0]).text !== pair[1].text;
    });
  }, true);

  var focusable = 'a[href], area[href], button, input:not([type="hidden"]), select, textarea, iframe, [tabindex], [contenteditable=""], [contenteditable="true"], details > summary:first-of-type';

  function takesFocus(el) {
    if (el.matches(":disabled") || el.closest("[inert]")) return false;
    if (el.tagName === "SUMMARY") return el.parentElement.tagName === "DETAILS" && el.parentElement.querySelector(":scope > summary") === el;
    if (!el.matches(focusable)) return false;
    return el.tabIndex >= 0;
  }

  // The controls a person can act on with a mouse; each must be a Tab
  // stop too, whatever its tabindex says.
  var controls = 'a[href], area[href], button, input:not([type="hidden"]), select, textarea, [contenteditable=""], [contenteditable="true"], ' +
    'details > summary:first-of-type, [tabindex]:not([tabindex^="-"])';

  // expected: the Tab stops a person should meet, in document order: the
  // visible, enabled controls (one per group of radios), bar those hidden
  // from assistive technology on purpose (aria-hidden, e.g. the drawer's
  // backdrop, which Escape and the close button stand for).
  kb.expected = function () {
    var seen = {}, out = [];
    document.querySelectorAll(controls).forEach(function (el) {
      if (el.matches(":disabled") || el.closest("[inert]") || el.closest('[aria-hidden="true"]') || !shows(el)) return;
      if (el.tagName === "SUMMARY" && el.parentElement.querySelector(":scope > summary") !== el) return;
      var k = key(el);
      if (seen[k]) return;
      if (k.indexOf("radio:") === 0) {
        var group = Array.prototype.filter.call(document.getElementsByName(el.name), function (r) {
          return r.type === "radio" && r.form === el.form && !r.matches(":disabled") && shows(r);
        });
        var checked = group.filter(function (r) { return r.checked; })[0];
        el = checked || group[0];
      }
      seen[k] = true;
      out.push({ id: id(el), key: k, desc: describe(el) });
    });
    return out;
  };

  // clickProblems: elements that act on a click (an onclick attribute, an
  // htmx request triggered by a click, one of static/js/app.js's click
  // hooks, an ARIA widget role) but take no keyboard focus; details
  // without a summary; positive tabindex values (they break the order).
  kb.clickProblems = function () {
    var out = [];
    var sel = '[onclick], [hx-get], [hx-post], [hx-put], [hx-patch], [hx-delete], [data-nav-toggle], [data-nav-close], [data-dismiss], [data-copy], [data-editor-tab], ' +
      '[role="button"], [role="link"], [role="tab"], [role="menuitem"], [role="checkbox"], [role="switch"], [role="option"], details, [tabindex]';
    document.querySelectorAll(sel).forEach(function (el) {
      var ti = el.getAttribute("tabindex");
      if (ti !== null && parseInt(ti, 10) > 0) out.push(describe(el) + ": tabindex " + ti + " puts it out of the page's order");
      if (el.tagName === "DETAILS") {
        if (!el.querySelector(":scope > summary")) out.push(describe(el) + ": details without a summary cannot be opened by keyboard");
        return;
      }
      if (!visible(el)) return;
      var clicks = el.hasAttribute("onclick") || el.matches("[data-nav-toggle], [data-nav-close], [data-dismiss], [data-copy], [data-editor-tab]") ||
        el.matches('[role="button"], [role="link"], [role="tab"], [role="menuitem"], [role="checkbox"], [role="switch"], [role="option"]');
      if (el.matches("[hx-get], [hx-post], [hx-put], [hx-patch], [hx-delete]")) {
        var trigger = el.getAttribute("hx-trigger");
        if (trigger === null) {
          // htmx's default: a form on submit, a field on change, anything else on click.
          clicks = clicks || !el.matches("form, input, select, textarea");
        } else {
          clicks = clicks || trigger.split(",").some(function (t) { return t.trim().split(/\s+/)[0] === "click"; });
        }
      }
      if (!clicks) return;
      // aria-hidden backdrops that close a drawer have a keyboard twin
      // (Escape, the close button): they need no focus of their own.
      if (el.getAttribute("aria-hidden") === "true" && el.matches("[data-nav-close]")) return;
      if (!takesFocus(el)) out.push(describe(el) + ": acts on a click but cannot take the keyboard's focus");
    });
    // What shows a hand on hover promises a click (a script's own click
    // listener, which the page cannot list, as in a vendored editor): it
    // must be, or sit in, a control that takes focus, or hold one (a
    // clickable heading with its own button). The outermost such element
    // is named once.
    var control = 'a[href], button, label, summary, select, input, textarea, [role="button"], [role="link"], [role="tab"], ' +
      '[role="checkbox"], [role="switch"], [role="menuitem"], [role="option"]';
    document.querySelectorAll("body *").forEach(function (el) {
      if (getComputedStyle(el).cursor !== "pointer" || !visible(el)) return;
      if (el.closest(control) || el.closest('[aria-hidden="true"]') || (el.tabIndex >= 0 && el.hasAttribute("tabindex"))) return;
      if (el.parentElement && getComputedStyle(el.parentElement).cursor === "pointer") return;
      if (el.querySelector(control)) return;
      out.push(describe(el) + ": shows a pointer (it looks clickable) but cannot take the keyboard's focus");
    });
    return out;
  };

  // orderProblems checks that the Tab stops ids follow the document order.
  kb.orderProblems = function (ids) {
    var out = [];
    for (var i = 1; i < ids.length; i++) {
      var a = kb.els.get(ids[i - 1]), b = kb.els.get(ids[i]);
      if (!a || !b || !a.isConnected || !b.isConnected) continue;
      if (!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING)) {
        out.push(describe(b) + " comes after " + describe(a) + " though it is before it on the page");
      }
    }
    return out;
  };

  // now describes where the focus is: a stop of the page (an iframe
  // when the focus is inside a frame, whose document the page cannot
  // see), "none" when nothing has it, "left" when it left the page (past
  // its last stop: a browser's own toolbar comes next).
  kb.now = function () {
    var el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) {
      return { state: document.hasFocus() ? "none" : "left" };
    }
    return { state: "stop", id: id(el), key: key(el), desc: describe(el), visible: shows(el), frame: el.tagName === "IFRAME" };
  };

  // settle records the focus indicator of the element focused last.
  kb.settle = function () {
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
  };

  // top puts the keyboard's starting point at the top of the page, as
  // when it has just loaded: the next Tab goes to the first stop.
  kb.top = function () {
    kb.settle();
    var mark = document.createElement("span");
    mark.tabIndex = -1;
    document.body.prepend(mark);
    mark.focus({ preventScroll: true });
    mark.remove();
    kb.log = [];
  };

  kb.reset = function () {
    kb.settle();
    kb.log = [];
  };
})();
