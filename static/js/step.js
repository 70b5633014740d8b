/* designlab: the step page's decision form in the browser.
   - After a run, keyboard focus moves to the results heading (it has tabindex="-1"), so a
     keyboard or screen-reader user lands on what the run produced instead of on <body>.
   - Typed but unsaved values are not lost without a word: leaving or reloading the page while
     the form differs from what was last saved asks first (beforeunload), and the values are kept
     as a draft in sessionStorage (this tab only); when the page comes back holding other values,
     a notice offers to restore the draft or discard it.
   Everything here only adds to the form: without JavaScript the form posts and the page reloads
   as before. */
(function () {
  "use strict";

  var FORM_ID = "decision-form";
  var DRAFT_PREFIX = "designlab:draft:";
  var baseline = null;

  function form() { return document.getElementById(FORM_ID); }

  function draftKey() { return DRAFT_PREFIX + window.location.pathname; }

  /* The decisions the form holds, by field name (the CSRF token, the design version and the
     conflict choices left out), as a string-to-string object. */
  function values(f) {
    var out = {};
    Array.prototype.forEach.call(f.elements, function (el) {
      if (!el.name || el.type === "hidden" || el.type === "submit" || el.type === "button") { return; }
      if (el.name.indexOf("keep:") === 0) { return; }
      if (el.type === "radio") { if (el.checked) { out[el.name] = el.value; } return; }
      if (el.type === "checkbox") { out[el.name] = el.checked ? "true" : "false"; return; }
      out[el.name] = el.value;
    });
    return out;
  }

  function same(a, b) {
    var keys = Object.keys(a).concat(Object.keys(b));
    return keys.every(function (k) { return a[k] === b[k]; });
  }

  function readDraft() {
    try { return JSON.parse(window.sessionStorage.getItem(draftKey()) || "null"); }
    catch (e) { return null; }
  }

  function writeDraft(v) {
    try { window.sessionStorage.setItem(draftKey(), JSON.stringify(v)); } catch (e) { /* full or off */ }
  }

  function clearDraft() {
    try { window.sessionStorage.removeItem(draftKey()); } catch (e) { /* off */ }
  }

  function dirty() {
    var f = form();
    return !!(f && baseline && !same(values(f), baseline));
  }

  /* What the form holds now is what is saved (a page load, or a save or run that answered 2xx). */
  function markSaved() {
    var f = form();
    baseline = f ? values(f) : null;
    clearDraft();
  }

  function onEdit(event) {
    var f = form();
    if (!f || !f.contains(event.target)) { return; }
    if (dirty()) { writeDraft(values(f)); } else { clearDraft(); }
  }

  function apply(f, draft) {
    Object.keys(draft).forEach(function (name) {
      var fields = f.querySelectorAll("[name='" + name.replace(/'/g, "\\'") + "']");
      Array.prototype.forEach.call(fields, function (el) {
        if (el.type === "radio") { el.checked = el.value === draft[name]; }
        else if (el.type === "checkbox") { el.checked = draft[name] === "true"; }
        else { el.value = draft[name]; }
      });
    });
    f.dispatchEvent(new Event("change", { bubbles: true }));  /* the live estimate follows */
  }

  /* A draft left by a reload: offer it back when it differs from what the page shows. */
  function offerDraft() {
    var f = form();
    var draft = readDraft();
    if (!f || !draft) { return; }
    if (same(values(f), draft)) { clearDraft(); return; }
    var box = document.createElement("div");
    box.className = "notice draft-notice";
    box.id = "draft-notice";
    box.setAttribute("role", "status");
    var text = document.createElement("p");
    text.textContent = "You had typed values here that were not saved before the page was reloaded.";
    var restore = document.createElement("button");
    restore.type = "button";
    restore.className = "button";
    restore.textContent = "Restore my unsaved values";
    var discard = document.createElement("button");
    discard.type = "button";
    discard.className = "button";
    discard.textContent = "Discard them";
    restore.addEventListener("click", function () {
      apply(f, draft);
      box.remove();
      writeDraft(values(f));
      var first = f.querySelector("input:not([type=hidden]), select");
      if (first) { first.focus(); }
    });
    discard.addEventListener("click", function () { clearDraft(); box.remove(); });
    text.appendChild(document.createTextNode(" "));
    box.appendChild(text);
    box.appendChild(restore);
    box.appendChild(document.createTextNode(" "));
    box.appendChild(discard);
    f.insertBefore(box, f.firstChild);
  }

  /* The path (no origin, no query) the htmx request of ``event`` went to; "" when unknown. */
  function path(event) {
    var info = event.detail && event.detail.pathInfo;
    var url = info && (info.finalRequestPath || info.requestPath);
    if (!url) { return ""; }
    try { return new URL(url, window.location.href).pathname; } catch (e) { return ""; }
  }

  function succeeded(event) {
    var xhr = event.detail && event.detail.xhr;
    return !!xhr && xhr.status >= 200 && xhr.status < 300;
  }

  /* A run (POST /steps/SLUG/run) that answered 2xx saved the form first. */
  function afterRequest(event) {
    var p = path(event);
    if (succeeded(event) && /^\/steps\/[^/]+\/run$/.test(p)) { markSaved(); }
  }

  /* A save swaps the form in again: the server marks it "Saved." only when it saved it (a
     refused form, 409 or 422, keeps the typed values and stays unsaved). Checked as soon as it
     is swapped in, before it settles, so a reload right after "Saved." shows asks nothing. */
  function afterSwap(event) {
    var swapped = event.target;
    if (swapped && swapped.id === "decisions" && swapped.querySelector(".saved")) { markSaved(); }
  }

  function afterSettle(event) {
    var p = path(event);
    var heading = document.getElementById("results-heading");
    if (heading && succeeded(event) && /^\/steps\/[^/]+\/run$/.test(p)) {
      heading.focus({ preventScroll: true });
    }
  }

  window.addEventListener("beforeunload", function (event) {
    if (!dirty()) { return undefined; }
    event.preventDefault();
    event.returnValue = "";  /* older browsers ask only when this is set */
    return "";
  });

  document.addEventListener("DOMContentLoaded", function () {
    var f = form();
    if (!f) { return; }
    baseline = values(f);
    offerDraft();
    /* A plain (non-htmx) submit leaves the page on purpose: no question then. */
    f.addEventListener("submit", function () { baseline = values(f); });
  });
  document.addEventListener("input", onEdit);
  document.addEventListener("change", onEdit);
  document.addEventListener("htmx:afterRequest", afterRequest);
  document.addEventListener("htmx:afterSwap", afterSwap);
  document.addEventListener("htmx:afterSettle", afterSettle);
})();
