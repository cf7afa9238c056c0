// The browser side of the notes example: list, add, and follow the events.
const list = document.getElementById("notes");
const log = document.getElementById("log");
const seen = new Set();

function show(n) {
  if (seen.has(n.id)) return;
  seen.add(n.id);
  const li = document.createElement("li");
  li.textContent = `#${n.id} ${n.title}`;
  list.appendChild(li);
}

fetch("/api/notes").then(r => r.json()).then(ns => ns.forEach(show));

document.getElementById("add").addEventListener("submit", async e => {
  e.preventDefault();
  const title = document.getElementById("title");
  const r = await fetch("/api/notes", {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({title: title.value}),
  });
  const v = await r.json();
  if (!r.ok) { log.textContent = `${v.status}: ${v.error}`; return; }
  show(v);
  title.value = "";
});

const events = new EventSource("/api/events");
events.addEventListener("note", e => show(JSON.parse(e.data)));
events.addEventListener("hello", () => { log.textContent = "following new notes"; });
