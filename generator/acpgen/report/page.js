"use strict";
// acpgen report: draws the folded transcript held in #acp-data. Every value
// of the transcript goes into the page as text (textContent), never as
// markup; only the rows in view are in the DOM (VirtualList). The lines as
// recorded (#acp-lines, the bulk of the page) come after this script, so the
// conversation is drawn before the browser has read them; they are parsed
// when the Lines view first needs them.
(function () {
  const data = JSON.parse(document.getElementById("acp-data").textContent);
  const rows = data.rows;
  const sessions = data.sessions;
  // Object.create(null): a terminal id such as "__proto__" is just a key.
  const terminals = Object.assign(Object.create(null), data.terminals);
  const findings = data.findings; // [line, kind, message, pointer, error, direction, method]
  const lineCount = data.lineCount;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null && text !== "") node.textContent = String(text);
    return node;
  }

  // line -> its row; line -> its findings
  const rowOf = new Int32Array(lineCount + 2).fill(-1);
  rows.forEach(function (row, index) {
    for (const line of row.l) rowOf[line] = index;
  });
  const findingsAt = new Map();
  findings.forEach(function (finding, index) {
    const list = findingsAt.get(finding[0]);
    if (list) list.push(index);
    else findingsAt.set(finding[0], [index]);
  });
  function sessionOfLine(line) {
    const row = rowOf[line];
    return row < 0 ? -1 : rows[row].s;
  }
  const errors = findings.filter((f) => f[4]).length;

  // ---- a list that keeps only the blocks of rows in view in the DOM ----
  class VirtualList {
    constructor(scroller, count, render, estimate) {
      this.scroller = scroller;
      this.count = count;
      this.render = render;
      this.size = 20;
      this.blocks = Math.ceil(count / this.size);
      this.heights = new Float64Array(this.blocks);
      for (let b = 0; b < this.blocks; b++) {
        this.heights[b] = estimate * Math.min(this.size, count - b * this.size);
      }
      this.tops = new Float64Array(this.blocks + 1);
      this.live = new Map();
      this.inner = el("div", "vlist");
      scroller.replaceChildren(this.inner);
      scroller.scrollTop = 0;
      this.layout();
      this.queued = false;
      this.onScroll = () => this.schedule();
      scroller.addEventListener("scroll", this.onScroll, { passive: true });
      this.update();
    }
    destroy() {
      this.scroller.removeEventListener("scroll", this.onScroll);
    }
    layout() {
      let top = 0;
      for (let b = 0; b < this.blocks; b++) {
        this.tops[b] = top;
        top += this.heights[b];
      }
      this.tops[this.blocks] = top;
      this.inner.style.height = top + "px";
      for (const [b, div] of this.live) div.style.top = this.tops[b] + "px";
    }
    blockAt(y) {
      let lo = 0;
      let hi = this.blocks - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (this.tops[mid] <= y) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    }
    schedule() {
      if (this.queued) return;
      this.queued = true;
      requestAnimationFrame(() => {
        this.queued = false;
        this.update();
      });
    }
    block(b) {
      const div = el("div", "vblock");
      div.style.top = this.tops[b] + "px";
      const end = Math.min(this.count, (b + 1) * this.size);
      for (let i = b * this.size; i < end; i++) {
        const item = this.render(i);
        item.dataset.i = String(i);
        div.appendChild(item);
      }
      return div;
    }
    measure(list, top) {
      let shift = 0;
      let changed = false;
      for (const b of list) {
        const div = this.live.get(b);
        if (!div) continue;
        const height = div.offsetHeight;
        if (height !== this.heights[b]) {
          if (this.tops[b] < top) shift += height - this.heights[b];
          this.heights[b] = height;
          changed = true;
        }
      }
      return changed ? shift : null;
    }
    update() {
      if (!this.blocks) return;
      const s = this.scroller;
      for (let pass = 0; pass < 6; pass++) {
        const top = s.scrollTop;
        const view = s.clientHeight;
        const atEnd = top > 0 && top + view >= this.tops[this.blocks] - 2;
        const first = this.blockAt(Math.max(0, top - view / 2));
        const last = this.blockAt(top + view * 1.5);
        for (const [b, div] of this.live) {
          if (b < first || b > last) {
            div.remove();
            this.live.delete(b);
          }
        }
        const added = [];
        for (let b = first; b <= last; b++) {
          if (!this.live.has(b)) {
            const div = this.block(b);
            this.inner.appendChild(div);
            this.live.set(b, div);
            added.push(b);
          }
        }
        const shift = this.measure(added, top);
        if (shift === null) return;
        this.layout();
        if (atEnd) s.scrollTop = this.tops[this.blocks] - view;
        else if (shift) s.scrollTop = top + shift;
      }
    }
    remeasure() {
      const shift = this.measure([...this.live.keys()], this.scroller.scrollTop);
      if (shift !== null) {
        this.layout();
        this.update();
      }
    }
    end() {
      // To the last row, measuring on the way (the rows drawn near the end
      // may be taller than estimated, which moves the end further).
      for (let pass = 0; pass < 10; pass++) {
        const total = this.tops[this.blocks];
        this.scroller.scrollTop = total;
        this.update();
        if (this.tops[this.blocks] === total) break;
      }
    }
    scrollTo(i) {
      const b = Math.floor(i / this.size);
      const s = this.scroller;
      s.scrollTop = this.tops[b];
      this.update();
      const div = this.live.get(b);
      const item = div && div.children[i - b * this.size];
      if (item) s.scrollTop = this.tops[b] + item.offsetTop - 8;
      this.update();
      return item;
    }
  }

  // ---- times ----
  function duration(ms) {
    if (ms < 10) return (Math.round(ms * 10) / 10).toFixed(1) + " ms";
    if (ms < 1000) return Math.round(ms) + " ms";
    if (ms < 60000) return (ms / 1000).toFixed(2) + " s";
    const minutes = Math.floor(ms / 60000);
    return minutes + " min " + Math.round((ms - minutes * 60000) / 1000) + " s";
  }
  function when(t) {
    return "+" + (t / 1000).toFixed(3) + " s";
  }
  function took(text, ms) {
    return el("span", "took", text + " " + duration(ms));
  }

  // ---- pieces of a row ----
  function rowButton(index, text) {
    // Jumps to row ``index`` in the conversation.
    const button = el("button", "ln jump", text);
    button.type = "button";
    button.addEventListener("click", function (event) {
      event.stopPropagation();
      if (filter !== -2 && rows[index].s !== filter) {
        filter = -2;
        select.value = "-2";
      }
      show("conversation", rows[index].n);
    });
    return button;
  }
  function lineButton(line) {
    const button = el("button", "ln", "line " + line);
    button.type = "button";
    button.title = "show line " + line + " in Lines";
    button.addEventListener("click", function (event) {
      event.stopPropagation();
      show("lines", line);
    });
    return button;
  }
  function arrow(direction) {
    if (direction === "c") return el("span", "dir", "client \u2192 agent");
    if (direction === "a") return el("span", "dir", "agent \u2192 client");
    return el("span", "dir", "");
  }
  function sessionTag(index) {
    if (sessions.length < 2 || index < 0) return null;
    const session = sessions[index];
    const tag = el("span", "stag", session.title || session.id.slice(0, 12));
    tag.title = "session " + session.id;
    return tag;
  }
  function findingList(lines) {
    const box = el("div", "findings");
    for (const line of lines) {
      for (const index of findingsAt.get(line) || []) box.appendChild(findingItem(index, true));
    }
    return box.childElementCount ? box : null;
  }
  function findingItem(index, withLine) {
    const f = findings[index];
    const item = el("div", "finding " + (f[4] ? "error" : "warning"));
    if (withLine) item.appendChild(lineButton(f[0]));
    item.appendChild(el("span", "fkind", (f[4] ? "error " : "warning ") + f[1]));
    item.lastChild.title = data.kinds[f[1]] || "";
    if (f[5]) item.appendChild(el("span", "fdir", f[5] === "c" ? "client \u2192 agent" : "agent \u2192 client"));
    if (f[6]) item.appendChild(el("code", "fmethod", f[6]));
    if (f[3]) item.appendChild(el("code", "pointer", f[3]));
    item.appendChild(el("span", "fmsg", f[2]));
    return item;
  }
  function blocks(content, cls) {
    const box = el("div", cls || "text");
    for (const block of content || []) {
      box.appendChild(el("div", block[0] === "text" ? "block" : "block other", block[1]));
    }
    return box;
  }
  function badge(text, cls) {
    return el("span", "badge " + (cls || ""), text);
  }
  function details(label, text) {
    const box = el("details", "raw-value");
    box.appendChild(el("summary", "", label));
    box.appendChild(el("pre", "", text));
    box.addEventListener("toggle", () => current && current.list.remeasure());
    return box;
  }
  function diffTable(item) {
    const box = el("div", "diff");
    box.appendChild(el("div", "diff-path", (item.new ? "new file " : "") + item.path));
    if (!item.lines.length) box.appendChild(el("div", "muted", "no changes"));
    for (const d of item.lines) {
      const line = el("div", "dl " + { " ": "ctx", "-": "del", "+": "add", "@": "hunk" }[d[0]]);
      line.appendChild(el("span", "no", d[1] || ""));
      line.appendChild(el("span", "no", d[2] || ""));
      line.appendChild(el("span", "op", d[0] === "@" ? "" : d[0]));
      line.appendChild(el("span", "code", d[3]));
      box.appendChild(line);
    }
    return box;
  }
  function toolContent(item) {
    if (item.t === "diff") return diffTable(item);
    if (item.t === "patch") {
      const box = el("div", "diff");
      box.appendChild(el("div", "diff-path", item.changes.join(", ")));
      for (const text of item.text ? item.text.split("\n") : []) {
        const first = text.charAt(0);
        const cls = first === "+" ? "add" : first === "-" ? "del" : first === "@" ? "hunk" : "ctx";
        const line = el("div", "dl " + cls);
        line.appendChild(el("span", "code", text));
        box.appendChild(line);
      }
      return box;
    }
    if (item.t === "terminal") {
      const known = terminals[item.id];
      const box = el("div", "terminal");
      const head = "terminal " + item.id + (known && known.command ? ": " + known.command : "");
      box.appendChild(el("div", "diff-path", head + (known && known.exit ? " (" + known.exit + ")" : "")));
      box.appendChild(el("pre", "", known && known.output ? known.output : "no output in the transcript"));
      return box;
    }
    return blocks(item.content, "text");
  }

  function message(who, row, body) {
    body.appendChild(el("div", "who", who));
    if (!row.content.length) body.appendChild(el("div", "muted", "no content to show"));
    body.appendChild(blocks(row.content));
    if (row.cut) body.appendChild(el("div", "muted", "\u2026 " + row.cut + " more characters not shown"));
  }
  function payloads(row, body) {
    // The raw payload of a line that could not be drawn (not a message, an
    // invalid message), pretty-printed when it is JSON.
    for (const entry of row.raw || []) {
      let text = entry[1];
      try {
        text = JSON.stringify(JSON.parse(text), null, 2);
      } catch (e) {
        // not JSON: as it is
      }
      const box = details("raw payload (line " + entry[0] + ")", text);
      box.classList.add("payload");
      box.open = true;
      body.appendChild(box);
    }
  }
  function historyStep(step) {
    const item = el("li", "step");
    item.appendChild(lineButton(step.n));
    if (step.t !== null && step.t !== undefined) item.appendChild(el("span", "when", when(step.t)));
    if (step.permission !== undefined) {
      const asked = rows[step.permission];
      const answer = asked.answer === undefined ? "not answered" : "answered " + optionName(asked);
      item.appendChild(rowButton(step.permission, "permission requested"));
      item.appendChild(el("span", "", " " + answer + (asked.answerLine ? " (line " + asked.answerLine + ")" : "")));
      if (asked.ms !== undefined) item.appendChild(took(", waited", asked.ms));
      return item;
    }
    if (step.status) item.appendChild(badge(step.status, "status s-" + step.status));
    const said = [];
    if (step.title) said.push("title \u201c" + step.title + "\u201d");
    if (step.kind) said.push("kind " + step.kind);
    if (step.set) said.push("set " + step.set.join(", "));
    if (said.length) item.appendChild(el("span", "", said.join("; ")));
    return item;
  }
  function optionName(row) {
    return ((row.options.find((o) => o[0] === row.answer) || [])[1] || row.answer);
  }

  const RENDER = {
    user(row, body) {
      message("User", row, body);
    },
    agent(row, body) {
      message("Agent", row, body);
    },
    thought(row, body) {
      message("Thought", row, body);
    },
    tool(row, body) {
      const head = el("div", "tool-head");
      head.appendChild(badge(row.status || "no status", "status s-" + (row.status || "none")));
      if (row.kind) head.appendChild(badge(row.kind, "kind"));
      head.appendChild(el("span", "tool-title", row.title || row.id));
      body.appendChild(head);
      const history = el("div", "history muted");
      history.textContent =
        "tool call " +
        row.id +
        (row.statuses.length ? ": " + row.statuses.map((s) => s[1] + " (line " + s[0] + ")").join(" \u2192 ") : "");
      body.appendChild(history);
      if (row.ms !== undefined) body.appendChild(took("took", row.ms));
      if (row.history && row.history.length) {
        const steps = el("ol", "timeline");
        for (const step of row.history) steps.appendChild(historyStep(step));
        body.appendChild(steps);
      }
      if (row.locations.length) body.appendChild(el("div", "locations", row.locations.join("  ")));
      for (const item of row.content) body.appendChild(toolContent(item));
      if (row.input !== undefined) body.appendChild(details("raw input", row.input));
      if (row.output !== undefined) body.appendChild(details("raw output", row.output));
    },
    plan(row, body) {
      body.appendChild(el("div", "who", row.removed ? "Plan removed" : "Plan"));
      const list = el("ol", "plan");
      for (const entry of row.entries) {
        const item = el("li", "entry");
        item.appendChild(badge(entry[2], "status s-" + entry[2]));
        item.appendChild(badge(entry[1], "priority"));
        item.appendChild(el("span", "entry-text", entry[0]));
        list.appendChild(item);
      }
      body.appendChild(list);
    },
    permission(row, body) {
      body.appendChild(el("div", "who", "Permission requested"));
      body.appendChild(el("div", "tool-title", row.title || row.tool));
      if (row.toolRow !== undefined) {
        const link = el("div", "perm-tool muted", "for ");
        link.appendChild(rowButton(row.toolRow, "tool call " + rows[row.toolRow].id + " (line " + rows[row.toolRow].n + ")"));
        body.appendChild(link);
      }
      const list = el("ul", "options");
      for (const option of row.options) {
        const chosen = row.answer === option[0];
        const item = el("li", chosen ? "option chosen" : "option", option[1] + " (" + option[2] + ")");
        if (chosen) item.appendChild(badge("chosen", "status s-completed"));
        list.appendChild(item);
      }
      body.appendChild(list);
      const answer =
        row.answer === undefined
          ? "not answered"
          : "answer: " + optionName(row) + " (line " + row.answerLine + ")";
      body.appendChild(el("div", "answer", answer));
      if (row.ms !== undefined) body.appendChild(took("waited", row.ms));
    },
    usage(row, body) {
      const share = typeof row.used === "number" && row.size ? " (" + Math.round((100 * row.used) / row.size) + "%)" : "";
      const text = "Context: " + row.used + " of " + row.size + " tokens" + share + (row.cost ? ", cost " + row.cost : "");
      body.appendChild(el("div", "usage", text));
    },
    turn(row, body) {
      const text = row.error ? "Turn failed: " + row.error : "Turn ended: " + row.stop;
      body.appendChild(el("div", "turn-end", text));
      if (row.ms !== undefined || row.first !== undefined) {
        const times = el("div", "turn-times");
        if (row.ms !== undefined) times.appendChild(took("turn", row.ms));
        if (row.first !== undefined) times.appendChild(took("first chunk after", row.first));
        body.appendChild(times);
      }
      if (row.usage.length) body.appendChild(el("div", "muted", row.usage.map((p) => p[0] + " " + p[1]).join(", ")));
    },
    rpc(row, body) {
      const head = el("div", "rpc-head");
      head.appendChild(el("code", "method", row.method || "response"));
      if (row.notification) head.appendChild(badge("notification", "kind"));
      if (row.params) head.appendChild(el("span", "summary", row.params));
      body.appendChild(head);
      if (row.error !== undefined) body.appendChild(el("div", "rpc-error", "error: " + row.error));
      else if (row.result !== undefined) body.appendChild(el("div", "summary", "result: " + (row.result || "{}")));
      else if (!row.notification && !row.response) body.appendChild(el("div", "muted", "no response"));
      if (row.ms !== undefined) body.appendChild(took("round trip", row.ms));
    },
    event(row, body) {
      const head = el("div", "rpc-head");
      head.appendChild(el("code", "method", row.label || "update"));
      head.appendChild(el("span", "summary", row.text));
      body.appendChild(head);
    },
    bad(row, body) {
      body.appendChild(el("div", "rpc-error", "Not a message: " + row.why));
      if (!row.d) body.appendChild(el("div", "muted", "direction not recorded"));
    },
  };

  function renderRow(index) {
    const row = rows[index];
    const node = el("div", "row k-" + row.k);
    const meta = el("div", "meta");
    meta.appendChild(lineButton(row.n));
    if (row.l.length > 1) meta.appendChild(el("span", "count", row.l.length + " lines"));
    meta.appendChild(arrow(row.d));
    if (row.t !== undefined) meta.appendChild(el("span", "when", when(row.t)));
    const tag = sessionTag(row.s);
    if (tag) meta.appendChild(tag);
    node.appendChild(meta);
    const body = el("div", "body");
    (RENDER[row.k] || RENDER.bad)(row, body);
    payloads(row, body);
    const box = findingList(row.l);
    if (box) body.appendChild(box);
    node.appendChild(body);
    return node;
  }

  let expanded = new Set();
  function renderLine(line) {
    const flagged = findingsAt.get(line);
    const level = flagged ? (flagged.some((i) => findings[i][4]) ? " flag-error" : " flag-warning") : "";
    const node = el("div", "line" + (expanded.has(line) ? " open" : "") + level);
    node.dataset.line = String(line);
    const head = el("div", "line-head");
    head.appendChild(el("span", "ln", String(line)));
    const d = recorded.dirs.charAt(line - 1);
    head.appendChild(el("span", "dir", d === "c" ? "\u2192" : d === "a" ? "\u2190" : ""));
    const raw = recorded.raw[line - 1];
    head.appendChild(el("span", "raw", raw));
    node.appendChild(head);
    if (expanded.has(line)) {
      let text = raw;
      try {
        text = JSON.stringify(JSON.parse(raw), null, 2);
      } catch (e) {
        // not JSON: shown as it is
      }
      node.appendChild(el("pre", "pretty", text));
    }
    const box = findingList([line]);
    if (box) {
      for (const button of box.querySelectorAll(".ln")) button.remove();
      node.appendChild(box);
    }
    head.addEventListener("click", function () {
      if (expanded.has(line)) expanded.delete(line);
      else expanded.add(line);
      node.replaceWith(renderLine(line));
      current.list.remeasure();
    });
    return node;
  }

  function renderFinding(index) {
    const item = findingItem(index, true);
    item.classList.add("finding-row");
    return item;
  }

  // ---- the sequence view: one arrow a message, between two lifelines ----
  const KINDS = { q: "request", n: "notification", r: "response", e: "error response" };
  let chosen = 0; // the line of the message chosen (with its pair highlighted), 0: none
  function methodOf(line) {
    const m = recorded.seq.m[line - 1];
    return m >= 0 ? recorded.seq.methods[m] : "";
  }
  function timeOf(line) {
    const t = recorded.seq.t;
    return t && t[line - 1] !== null && t[line - 1] !== undefined ? t[line - 1] : null;
  }
  function roundTrip(line) {
    // A request's or a response's round trip in ms, null when a time is missing.
    const pair = recorded.seq.p[line - 1];
    if (!pair) return null;
    const request = Math.min(line, pair);
    const answer = Math.max(line, pair);
    const sent = timeOf(request);
    const back = timeOf(answer);
    return sent === null || back === null ? null : Math.round((back - sent) * 1000) / 1000;
  }
  function arrowLabel(line) {
    const kind = recorded.seq.k.charAt(line - 1);
    const method = methodOf(line);
    if (kind === "r" || kind === "e") return (method || "no request") + (kind === "e" ? " error" : " result");
    return method;
  }
  function describe(line) {
    // What the arrow says, in words (its accessible name).
    const kind = recorded.seq.k.charAt(line - 1);
    const d = recorded.dirs.charAt(line - 1);
    const pair = recorded.seq.p[line - 1];
    const words = ["line " + line, KINDS[kind], methodOf(line) || "of no request in the transcript"];
    words.push(d === "c" ? "client to agent" : d === "a" ? "agent to client" : "direction not recorded");
    if (kind === "q") words.push(pair ? "answered at line " + pair : "never answered");
    else if (pair) words.push("to the request at line " + pair);
    return words.join(", ");
  }
  function renderArrow(line) {
    const kind = recorded.seq.k.charAt(line - 1);
    const d = recorded.dirs.charAt(line - 1);
    const pair = recorded.seq.p[line - 1];
    let cls = "seq seq-" + kind + " d-" + (d === "c" || d === "a" ? d : "none");
    if (kind === "q" && !pair) cls += " unanswered";
    if (chosen && (line === chosen || line === recorded.seq.p[chosen - 1])) cls += " paired";
    const node = el("div", cls);
    node.dataset.line = String(line);
    node.appendChild(lineButton(line));
    const t = timeOf(line);
    node.appendChild(el("span", "when", t === null ? "" : when(t)));
    const lane = el("div", "lane");
    const button = el("button", "arrow");
    button.type = "button";
    button.setAttribute("aria-label", describe(line));
    button.setAttribute("aria-pressed", String(line === chosen));
    button.appendChild(el("span", "label", arrowLabel(line)));
    button.appendChild(el("span", "shaft"));
    button.addEventListener("click", () => choose(line));
    lane.appendChild(button);
    node.appendChild(lane);
    const note = el("span", "note");
    if (kind === "q" && !pair) note.appendChild(badge("no answer", "unanswered-badge"));
    else if (kind === "r" || kind === "e") {
      const ms = roundTrip(line);
      if (ms !== null) note.textContent = duration(ms);
      else if (!pair) note.textContent = "no request";
    } else if (kind === "n") note.textContent = "notification";
    node.appendChild(note);
    return node;
  }
  const seqInfo = document.getElementById("seq-info");
  function choose(line) {
    // Highlight the message at ``line`` and its pair, say their round trip.
    chosen = line;
    const pair = recorded.seq.p[line - 1];
    for (const node of scroller.querySelectorAll(".seq")) {
      const at = Number(node.dataset.line);
      const on = at === line || (pair > 0 && at === pair);
      node.classList.toggle("paired", on);
      node.querySelector(".arrow").setAttribute("aria-pressed", String(at === line));
    }
    const kind = recorded.seq.k.charAt(line - 1);
    seqInfo.replaceChildren();
    const method = methodOf(line) || "a response to no request";
    if (kind === "n") {
      seqInfo.textContent = method + ": a notification (line " + line + "), no response expected";
      return;
    }
    if (!pair) {
      const text = kind === "q" ? ": request at line " + line + ", never answered in the transcript" : " (line " + line + ")";
      seqInfo.textContent = method + text;
      return;
    }
    const request = Math.min(line, pair);
    const answer = Math.max(line, pair);
    const outcome = recorded.seq.k.charAt(answer - 1) === "e" ? "error" : "response";
    seqInfo.appendChild(el("code", "", method));
    seqInfo.appendChild(document.createTextNode(": request at line " + request + ", " + outcome + " at line " + answer));
    const ms = roundTrip(line);
    seqInfo.appendChild(el("span", "rtt", ms === null ? "no times in the transcript" : "round trip " + duration(ms)));
    const go = el("button", "ln", "go to the " + (line === request ? outcome : "request") + " (line " + pair + ")");
    go.type = "button";
    go.addEventListener("click", () => focusArrow(lowerBound(current.items, pair)));
    seqInfo.appendChild(go);
  }
  function focusArrow(position) {
    // Focus the arrow at ``position`` of the view, drawing it if need be.
    if (!current || current.view !== "sequence" || position < 0 || position >= current.items.length) return;
    let item = scroller.querySelector('.seq[data-i="' + position + '"]');
    if (!item) item = current.list.scrollTo(position);
    if (item) item.querySelector(".arrow").focus();
  }

  // ---- views, the session filter ----
  const scroller = document.getElementById("view");
  const seqHead = document.getElementById("seq-head");
  const select = document.getElementById("session");
  let current = null;
  let filter = -2; // -2: every session

  function items(view) {
    const out = [];
    if (view === "conversation") {
      for (let i = 0; i < rows.length; i++) if (filter === -2 || rows[i].s === filter) out.push(i);
    } else if (view === "lines") {
      for (let line = 1; line <= lineCount; line++) if (filter === -2 || sessionOfLine(line) === filter) out.push(line);
    } else if (view === "sequence") {
      const kinds = recorded.seq.k;
      for (let line = 1; line <= lineCount; line++) {
        if (kinds.charCodeAt(line - 1) !== 45 && (filter === -2 || sessionOfLine(line) === filter)) out.push(line);
      }
    } else {
      for (let i = 0; i < findings.length; i++) if (filter === -2 || sessionOfLine(findings[i][0]) === filter) out.push(i);
    }
    return out;
  }

  let recorded = null; // {raw: [line text], dirs: "ca-...", seq: {k, m, methods, p, t}}, once read
  function lines() {
    if (recorded === null) {
      // Until the document is read, the element may hold part of its text.
      if (document.readyState === "loading") return false;
      recorded = JSON.parse(document.getElementById("acp-lines").textContent);
    }
    return true;
  }

  function show(view, line) {
    if (current) current.list.destroy();
    if (view === "timings" || view === "traces") {
      for (const tab of document.querySelectorAll("[role=tab]")) {
        tab.setAttribute("aria-selected", String(tab.dataset.view === view));
      }
      document.body.dataset.view = view;
      scroller.replaceChildren(view === "timings" ? timings() : traces());
      scroller.scrollTop = 0;
      current = { view: view, items: [], list: { destroy() {}, remeasure() {} } };
      searched(false);
      return;
    }
    if ((view === "lines" || view === "sequence") && !lines()) {
      scroller.replaceChildren(el("p", "empty", "Reading the lines\u2026"));
      current = { view: view, items: [], list: { destroy() {}, remeasure() {} } };
      document.addEventListener("DOMContentLoaded", () => current.view === view && show(view, line));
      return;
    }
    for (const tab of document.querySelectorAll("[role=tab]")) {
      tab.setAttribute("aria-selected", String(tab.dataset.view === view));
    }
    document.body.dataset.view = view;
    const list = items(view);
    const draw =
      view === "conversation"
        ? (i) => renderRow(list[i])
        : view === "lines"
          ? (i) => renderLine(list[i])
          : view === "sequence"
            ? (i) => renderArrow(list[i])
            : (i) => renderFinding(list[i]);
    const render = (i) => highlight(draw(i), i);
    const estimate = view === "conversation" ? 64 : view === "sequence" ? 32 : 24;
    if (view === "sequence") seqHead.style.paddingRight = scroller.offsetWidth - scroller.clientWidth + "px";
    if (!list.length) {
      scroller.replaceChildren(el("p", "empty", view === "findings" ? "No findings." : "Nothing to show."));
      current = { view: view, items: [], list: { destroy() {}, remeasure() {} } };
      return;
    }
    current = { view: view, items: list, list: new VirtualList(scroller, list.length, render, estimate) };
    searched(false);
    if (line !== undefined) {
      let position = -1;
      if (view === "lines" || view === "sequence") position = lowerBound(list, line);
      else if (view === "conversation" && rowOf[line] >= 0) {
        position = lowerBound(list, rowOf[line]);
        if (list[position] !== rowOf[line]) position = -1;
      }
      if (position >= 0) {
        const item = current.list.scrollTo(position);
        if (item) item.classList.add("target");
      }
    }
  }
  function lowerBound(list, value) {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid] < value) lo = mid + 1;
      else hi = mid;
    }
    return lo < list.length ? lo : list.length - 1;
  }

  // ---- search: over every item of the view, drawn or not ----
  const searchBox = document.getElementById("search");
  const searchCount = document.getElementById("search-count");
  let query = ""; // lower case
  let hits = []; // positions in current.items
  let hitAt = -1;
  const haystacks = new Map(); // view -> [lower-cased text of each item]

  function strings(value, out) {
    if (typeof value === "string") out.push(value);
    else if (typeof value === "number") out.push(String(value));
    else if (Array.isArray(value)) for (const item of value) strings(item, out);
    else if (value && typeof value === "object") for (const key in value) strings(value[key], out);
  }
  const SKIP = { k: 1, n: 1, s: 1, d: 1, l: 1, t: 1, ms: 1, first: 1, toolRow: 1, history: 1, started: 1 };
  function rowText(index) {
    const row = rows[index];
    const out = [];
    for (const key in row) if (!SKIP[key]) strings(row[key], out);
    for (const line of row.l) for (const f of findingsAt.get(line) || []) strings(findings[f].slice(1, 4), out);
    return out.join("\n");
  }
  function haystack(view) {
    let texts = haystacks.get(view);
    if (texts) return texts;
    texts = [];
    if (view === "conversation") for (let i = 0; i < rows.length; i++) texts.push(rowText(i).toLowerCase());
    else if (view === "sequence") texts = haystack("lines"); // an arrow is found by its line
    else if (view === "lines") for (const raw of recorded.raw) texts.push(raw.toLowerCase());
    else for (const f of findings) texts.push([f[1], f[2], f[3], f[6]].join("\n").toLowerCase());
    haystacks.set(view, texts);
    return texts;
  }
  function searched(jump) {
    // The hits of the query in the current view; with ``jump``, go to the first.
    hits = [];
    hitAt = -1;
    if (query && current && current.items.length) {
      const texts = haystack(current.view);
      const base = current.view === "lines" || current.view === "sequence" ? 1 : 0; // lines are numbered from 1
      current.items.forEach(function (item, position) {
        if (texts[item - base].includes(query)) hits.push(position);
      });
    }
    if (!query) searchCount.textContent = "";
    else if (current && (current.view === "timings" || current.view === "traces")) searchCount.textContent = "";
    else searchCount.textContent = hits.length ? hits.length + " found" : "not found";
    if (jump && hits.length) go(0);
  }
  function go(at) {
    if (!hits.length) return;
    hitAt = ((at % hits.length) + hits.length) % hits.length;
    searchCount.textContent = hitAt + 1 + " of " + hits.length;
    for (const old of scroller.querySelectorAll(".hit-current")) old.classList.remove("hit-current");
    const item = current.list.scrollTo(hits[hitAt]);
    if (!item) return;
    item.classList.add("hit-current");
    const mark = item.querySelector("mark");
    if (mark) {
      const shut = mark.closest("details:not([open])");
      if (shut) shut.open = true;
      mark.classList.add("current");
      mark.scrollIntoView({ block: "center" });
    }
  }
  function highlight(node, position) {
    // Marks the query in the text of a drawn item (as text nodes, never markup).
    if (!query) return node;
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    const found = [];
    while (walker.nextNode()) found.push(walker.currentNode);
    for (const text of found) {
      const value = text.nodeValue;
      const lower = value.toLowerCase();
      if (lower.length !== value.length) continue; // a case change that moves the offsets
      let at = lower.indexOf(query);
      let rest = text;
      let offset = 0;
      while (at >= 0) {
        const match = rest.splitText(at - offset);
        rest = match.splitText(query.length);
        const mark = el("mark", "hit");
        match.replaceWith(mark);
        mark.appendChild(match);
        offset = at + query.length;
        at = lower.indexOf(query, offset);
      }
    }
    if (hitAt >= 0 && hits[hitAt] === position) node.classList.add("hit-current");
    return node;
  }
  function search(jump) {
    const wanted = searchBox.value.toLowerCase();
    if (wanted !== query) {
      query = wanted;
      if (current && (current.view === "lines" || current.view === "sequence") && !lines()) return;
      if (current && current.view !== "timings" && current.view !== "traces") show(current.view);
    }
    searched(jump);
  }
  let typing = 0;
  searchBox.addEventListener("input", function () {
    clearTimeout(typing);
    typing = setTimeout(() => search(true), 200);
  });
  searchBox.addEventListener("keydown", function (event) {
    if (event.key !== "Enter") return;
    event.preventDefault();
    clearTimeout(typing);
    if (searchBox.value.toLowerCase() !== query) search(true);
    else go(hitAt + (event.shiftKey ? -1 : 1));
  });
  document.getElementById("search-next").addEventListener("click", () => go(hitAt + 1));
  document.getElementById("search-prev").addEventListener("click", () => go(hitAt - 1));
  // Ctrl+F (Cmd+F) searches every message, not only the rows drawn; a
  // second one, in the box, is the browser's own.
  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key === "f" && document.activeElement !== searchBox) {
      event.preventDefault();
      searchBox.focus();
      searchBox.select();
    }
  });

  // ---- timings ----
  function table(head, entries, cells) {
    const box = el("table", "timing");
    const top = el("tr");
    for (const name of head) top.appendChild(el("th", "", name));
    box.appendChild(top);
    for (const entry of entries.slice(0, 1000)) {
      const tr = el("tr");
      for (const cell of cells(entry)) {
        const td = el("td");
        if (cell instanceof Node) td.appendChild(cell);
        else td.textContent = cell;
        tr.appendChild(td);
      }
      box.appendChild(tr);
    }
    if (entries.length > 1000) {
      const tr = el("tr");
      tr.appendChild(el("td", "muted", "\u2026 and " + (entries.length - 1000) + " more"));
      box.appendChild(tr);
    }
    return box;
  }
  function timings() {
    const box = el("div", "timings");
    if (!data.timed) {
      box.appendChild(el("p", "empty", "No times: the transcript's records have no timestamps (acpgen tap writes them)."));
      return box;
    }
    const wanted = (row) => filter === -2 || row.s === filter;
    box.appendChild(el("h2", "", "Round trips by method"));
    box.appendChild(
      table(["method", "requests", "p50", "p99", "max"], data.latency, (m) => [
        el("code", "", m[0]),
        String(m[1]),
        duration(m[2]),
        duration(m[3]),
        duration(m[4]),
      ]),
    );
    const indexed = rows.map((row, index) => [row, index]).filter((pair) => wanted(pair[0]));
    const turns = indexed.filter((p) => p[0].k === "turn" && p[0].ms !== undefined);
    box.appendChild(el("h2", "", "Turns"));
    box.appendChild(
      table(["turn end", "stop", "turn", "first chunk"], turns, (p) => [
        rowButton(p[1], "line " + p[0].n),
        p[0].error ? "error" : p[0].stop,
        duration(p[0].ms),
        p[0].first !== undefined ? duration(p[0].first) : "",
      ]),
    );
    const tools = indexed.filter((p) => p[0].k === "tool" && p[0].ms !== undefined);
    box.appendChild(el("h2", "", "Tool calls"));
    box.appendChild(
      table(["tool call", "title", "status", "took"], tools, (p) => [
        rowButton(p[1], "line " + p[0].n),
        p[0].title || p[0].id,
        p[0].status,
        duration(p[0].ms),
      ]),
    );
    const waits = indexed.filter((p) => p[0].k === "permission" && p[0].ms !== undefined);
    box.appendChild(el("h2", "", "Permission waits"));
    box.appendChild(
      table(["request", "for", "answer", "waited"], waits, (p) => [
        rowButton(p[1], "line " + p[0].n),
        p[0].title || p[0].tool,
        optionName(p[0]),
        duration(p[0].ms),
      ]),
    );
    return box;
  }

  // ---- traces: the messages carrying a traceparent, by trace ----
  function traces() {
    const box = el("div", "timings traces");
    const list = (data.traces && data.traces.list) || [];
    if (!list.length) {
      box.appendChild(el("p", "empty", "No traces: no message carries a traceparent in its _meta."));
      return box;
    }
    const wanted = (hop) => filter === -2 || sessionOfLine(hop[0]) === filter;
    for (const [traceId, all, cut] of list) {
      const hops = all.filter(wanted);
      if (!hops.length) continue;
      const spans = new Set(hops.map((hop) => hop[4]));
      const head = el("h2", "", "Trace ");
      head.appendChild(el("code", "", traceId));
      head.appendChild(
        document.createTextNode(
          " \u2014 " + hops.length + " message" + (hops.length === 1 ? "" : "s") + ", " + spans.size + " span" +
            (spans.size === 1 ? "" : "s") + (cut ? " (" + cut + " more not kept)" : ""),
        ),
      );
      box.appendChild(head);
      const first = new Map(); // span -> the line it first sent
      box.appendChild(
        table(["line", "direction", "message", "from span", "serving"], hops, (hop) => {
          const span = el("code", "", hop[4]);
          if (first.has(hop[4])) span.title = "first seen at line " + first.get(hop[4]);
          else first.set(hop[4], hop[0]);
          return [
            lineButton(hop[0]),
            arrow(hop[1]),
            el("code", "", (hop[2] === "q" ? "\u2192 " : "") + hop[3]),
            span,
            hop[5] ? lineButton(hop[5]) : "",
          ];
        }),
      );
    }
    if (data.traces.dropped) box.appendChild(el("p", "muted", data.traces.dropped + " more messages of traces not kept"));
    return box;
  }

  // ---- acpgen report --live: load again when the transcript grew ----
  function live(settings) {
    const KEY = "acpgen-live";
    let saved = null;
    try {
      saved = JSON.parse(sessionStorage.getItem(KEY) || "null");
      sessionStorage.removeItem(KEY);
    } catch (e) {
      saved = null; // no storage: start at the top
    }
    if (saved) {
      if (saved.filter === -2 || (saved.filter >= 0 && saved.filter < sessions.length)) {
        filter = saved.filter;
        select.value = String(filter);
      }
      searchBox.value = saved.query || "";
      query = searchBox.value.toLowerCase();
      const views = ["conversation", "lines", "sequence", "findings", "timings", "traces"];
      show(views.includes(saved.view) ? saved.view : "conversation");
      if (saved.end && current.list.end) current.list.end();
      else {
        scroller.scrollTop = saved.top || 0;
        if (current.list.update) current.list.update();
      }
    }
    document.documentElement.dataset.live = settings.version;
    function ask() {
      fetch("version", { cache: "no-store" })
        .then((response) => (response.ok ? response.text() : settings.version))
        .then(function (version) {
          if (version === settings.version) return setTimeout(ask, settings.interval);
          const s = scroller;
          const place = {
            view: current ? current.view : "conversation",
            filter: filter,
            query: searchBox.value,
            top: s.scrollTop,
            end: s.scrollTop > 0 && s.scrollTop + s.clientHeight >= s.scrollHeight - 2,
          };
          try {
            sessionStorage.setItem(KEY, JSON.stringify(place));
          } catch (e) {
            // no storage: the page starts again at the top
          }
          location.reload();
        })
        .catch(() => setTimeout(ask, settings.interval)); // the server is gone or busy: ask again later
    }
    setTimeout(ask, settings.interval);
  }

  // ---- the header ----
  function plural(count, word) {
    return count + " " + word + (count === 1 ? "" : "s");
  }
  document.getElementById("title").textContent = data.title;
  const summary = [
    plural(lineCount, "line"),
    plural(sessions.length, "session"),
    plural(errors, "error") + ", " + plural(findings.length - errors, "warning") + (data.package ? " (checked against " + data.package + ")" : " (not checked)"),
    data.generator,
  ];
  document.getElementById("summary").textContent = summary.join(" \u00b7 ");
  document.getElementById("tab-findings").textContent = "Findings (" + findings.length + ")";
  const all = el("option", "", "all sessions (" + sessions.length + ")");
  all.value = "-2";
  select.appendChild(all);
  sessions.forEach(function (session, index) {
    const option = el("option", "", (session.title ? session.title + " \u2014 " : "") + session.id + (session.cwd ? " (" + session.cwd + ")" : ""));
    option.value = String(index);
    select.appendChild(option);
  });
  select.disabled = sessions.length < 2;
  select.addEventListener("change", function () {
    filter = Number(select.value);
    show(current ? current.view : "conversation");
  });
  for (const tab of document.querySelectorAll("[role=tab]")) {
    tab.addEventListener("click", () => show(tab.dataset.view));
  }
  window.addEventListener("resize", () => current && current.list.remeasure());
  // Home and End go to the first and the last row at once (the browser's
  // animated scroll would aim at an end that moves as rows get measured).
  scroller.addEventListener("keydown", function (event) {
    if (!current || !current.list.end || event.altKey || event.ctrlKey || event.metaKey) return;
    const arrowAt = event.target.classList && event.target.classList.contains("arrow") ? event.target.closest(".seq") : null;
    if (arrowAt && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      // From arrow to arrow, in the order of the messages.
      focusArrow(Number(arrowAt.dataset.i) + (event.key === "ArrowDown" ? 1 : -1));
    } else if (event.key === "End") current.list.end();
    else if (event.key === "Home") scroller.scrollTop = 0;
    else return;
    event.preventDefault();
  });

  show("conversation");
  if (data.live) live(data.live);
  document.documentElement.dataset.drawn = String(performance.now());
  requestAnimationFrame(function () {
    document.documentElement.dataset.ready = String(performance.now());
  });
})();
