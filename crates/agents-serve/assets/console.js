// agents console: the one script. It follows a running turn over server-sent events and
// sends chat messages and cancellations with the page's CSRF token. It writes text with
// textContent only: nothing a model, tool or file wrote is ever parsed as HTML.
"use strict";

(function () {
  function csrfOf(form) {
    var field = form.querySelector("input[name=csrf]");
    return field ? field.value : "";
  }

  function line(live, className, text) {
    var div = document.createElement("div");
    div.className = className;
    div.textContent = text;
    live.appendChild(div);
    return div;
  }

  function follow(box) {
    var live = document.getElementById("live");
    var answer = null;
    var setAside = null;
    var source = new EventSource(box.dataset.events);
    box.dataset.running = "true";
    source.addEventListener("idle", function () {
      source.close();
      box.dataset.running = "false";
    });
    source.addEventListener("run", function (message) {
      var event = JSON.parse(message.data);
      if (event.type === "text") {
        if (!answer) { answer = line(live, "answer", ""); }
        answer.textContent += event.text;
      } else if (event.type === "set_aside") {
        // what streamed since the last tool call is not the answer
        if (answer) { answer.className = "answer set-aside"; }
        if (event.earlier_stands) {
          // a reply to a nudge was dropped: the one set aside before it is the answer
          if (setAside) { setAside.className = "answer"; }
          setAside = null;
          line(live, "state-line", "dropped (" + event.reason + "): the reply before it stands");
        } else {
          setAside = answer;
          line(live, "state-line", "not the answer (" + event.reason + "): asking again");
        }
        answer = null;
      } else if (event.type === "tool_started") {
        answer = null;
        line(live, "tool-line", "\u25b6 " + event.name + " " + event.arguments);
      } else if (event.type === "tool_completed") {
        line(live, "tool-line", (event.error ? "\u2717 " : "\u2713 ") + event.name + ": " + event.result);
      } else if (event.type === "suspended") {
        line(live, "state-line", "waiting for approval: reload to decide");
      } else if (event.type === "done" || event.type === "failed") {
        var text = event.type === "done" ? "turn finished: " + event.status : "turn failed: " + event.message;
        var done = line(live, "state-line done", text + " \u00b7 ");
        var reload = document.createElement("a");
        reload.href = window.location.pathname;
        reload.textContent = "show the steps";
        done.appendChild(reload);
        source.close();
        box.dataset.running = "false";
      }
    });
    source.onerror = function () {
      source.close();
      box.dataset.running = "false";
    };
  }

  function post(form, body) {
    var params = new URLSearchParams(new FormData(form));
    return fetch(form.action, {
      method: "POST",
      headers: { "Accept": "application/json", "X-CSRF-Token": csrfOf(form) },
      body: params,
      credentials: "same-origin"
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.querySelector("section.chat-box");
    if (!box) { return; }
    if (box.dataset.running === "true") { follow(box); }
    var chat = document.getElementById("chat-form");
    chat.addEventListener("submit", function (event) {
      event.preventDefault();
      var live = document.getElementById("live");
      var text = document.getElementById("chat-text");
      line(live, "state-line user-line", "you: " + text.value);
      post(chat).then(function (response) {
        if (response.status === 202) {
          text.value = "";
          follow(box);
        } else {
          var type = response.headers.get("Content-Type") || "";
          if (type.indexOf("application/json") === 0) {
            // the refusal says why (another process runs the session, the server stops...)
            response.json().then(function (body) {
              line(live, "state-line error", "not sent (" + response.status + "): " + body.error);
            });
          } else {
            line(live, "state-line error", "not sent (" + response.status + ")");
          }
        }
      });
    });
    var cancel = document.getElementById("cancel-form");
    cancel.addEventListener("submit", function (event) {
      event.preventDefault();
      post(cancel).then(function (response) {
        line(document.getElementById("live"), "state-line", response.ok || response.redirected ? "cancelling\u2026" : "nothing to cancel");
      });
    });
  });
})();
