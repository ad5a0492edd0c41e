"""The report's stylesheet and script, inlined into the one HTML file (nothing is fetched)."""

CSS = r"""
:root { --fg:#1d2330; --muted:#5b6475; --line:#e3e6ec; --bg:#f7f8fa; --card:#fff; --accent:#2456c9;
        --break:#d63a3a; --recomp:#e08a00; --guard:#c9a400; --ok:#23884a; --code-bg:#fbfbfd; }
* { box-sizing: border-box; }
html, body { margin:0; padding:0; background:var(--bg); color:var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif; }
a { color:var(--accent); text-decoration:none; } a:hover { text-decoration:underline; }
header { position:sticky; top:0; z-index:5; display:flex; align-items:center; gap:16px; height:52px;
  padding:0 18px; background:#1d2330; color:#fff; }
header .brand { font-weight:700; letter-spacing:.3px; }
header .dir { color:#aab3c5; font-family:ui-monospace,"DejaVu Sans Mono",monospace; font-size:12px;
  overflow:hidden; text-overflow:ellipsis; white-space:nowrap; max-width:40vw; }
header .stats { color:#d9deea; font-size:13px; margin-left:auto; white-space:nowrap; }
header input { width:260px; padding:6px 10px; border-radius:6px; border:1px solid #48516a;
  background:#2a3142; color:#fff; font-size:13px; }
.layout { display:flex; min-height:calc(100vh - 52px); }
nav { width:260px; flex:none; border-right:1px solid var(--line); background:#fff; padding:12px 0;
  position:sticky; top:52px; height:calc(100vh - 52px); overflow:auto; }
nav .group { padding:10px 16px 4px; color:var(--muted); font-size:11px; text-transform:uppercase; letter-spacing:.6px; }
nav a { display:flex; align-items:center; gap:6px; padding:4px 16px; color:var(--fg); font-size:13px;
  white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
nav a:hover { background:#eef2fb; text-decoration:none; } nav a.active { background:#e3ebfc; font-weight:600; }
nav a .name { overflow:hidden; text-overflow:ellipsis; }
.badge { display:inline-block; min-width:18px; padding:0 5px; border-radius:9px; font-size:11px; line-height:17px;
  text-align:center; color:#fff; font-weight:600; }
.badge.break { background:var(--break); } .badge.recomp { background:var(--recomp); } .badge.neutral { background:#8c95a8; }
main { flex:1; min-width:0; padding:20px 28px 60px; }
.view { display:none; } .view.shown { display:block; }
h2 { margin:0 0 6px; font-size:22px; } h2 .where { font-size:13px; font-weight:400; color:var(--muted); margin-left:8px; }
h3 { margin:26px 0 10px; font-size:16px; border-bottom:1px solid var(--line); padding-bottom:4px; }
.facts { display:flex; flex-wrap:wrap; gap:8px; margin:10px 0 4px; }
.chip { background:var(--card); border:1px solid var(--line); border-radius:14px; padding:2px 10px; font-size:12.5px; }
.chip b { font-weight:700; } .chip.break b { color:var(--break); } .chip.recomp b { color:var(--recomp); }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 14px; margin:10px 0; }
.card.break { border-left:4px solid var(--break); } .card.recomp { border-left:4px solid var(--recomp); }
.card .title { font-weight:600; } .card .sub { color:var(--muted); font-size:12.5px; }
.card ul { margin:6px 0 0 0; padding-left:18px; } .card li { margin:2px 0; }
.kv { display:grid; grid-template-columns:120px 1fr; gap:2px 10px; margin-top:6px; font-size:13px; }
.kv .k { color:var(--muted); }
table { border-collapse:collapse; background:var(--card); border:1px solid var(--line); margin:8px 0; width:100%; }
th, td { text-align:left; padding:6px 10px; border-bottom:1px solid var(--line); font-size:13px; vertical-align:top; }
th { background:#f0f2f6; font-weight:600; color:#394154; }
td.r, th.r { text-align:right; font-variant-numeric:tabular-nums; }
code, .mono { font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace; font-size:12.5px; }
.split { display:grid; grid-template-columns:1fr 1fr; gap:14px; align-items:start; }
.panel { background:var(--card); border:1px solid var(--line); border-radius:8px; overflow:hidden; min-width:0; }
.panel > .head { display:flex; align-items:center; gap:8px; padding:7px 10px; border-bottom:1px solid var(--line);
  background:#f3f5f9; font-size:12.5px; flex-wrap:wrap; }
.panel > .head .label { font-weight:600; }
.tabs { display:flex; flex-wrap:wrap; gap:4px; }
.tabs button { border:1px solid var(--line); background:#fff; border-radius:5px; padding:2px 8px; font-size:12px; cursor:pointer; }
.tabs button.on { background:var(--accent); color:#fff; border-color:var(--accent); }
.pane { display:none; } .pane.on { display:block; }
.code { background:var(--code-bg); max-height:70vh; overflow:auto; padding:4px 0; }
.code.tall { max-height:none; }
.line { display:flex; white-space:pre; font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;
  font-size:12.5px; line-height:1.5; }
.line .n { flex:none; width:46px; text-align:right; padding-right:8px; color:#9aa2b1; user-select:none; }
.line .m { flex:none; width:14px; }
.line code { flex:1; padding-right:12px; }
.line.break { background:#fdecec; } .line.break .m { background:var(--break); }
.line.recomp { background:#fff3de; } .line.recomp .m { background:var(--recomp); }
.line.guard .m { background:var(--guard); }
.line.hl { outline:2px solid var(--accent); outline-offset:-2px; background:#e8efff; }
.ann { margin-left:14px; color:var(--muted); font-size:11.5px; font-family:system-ui,"DejaVu Sans",sans-serif; }
.ann a { color:#4a6fd0; }
.kw { color:#7a2fb5; } .str { color:#1b7f3b; } .com { color:#8a93a3; font-style:italic; } .num { color:#b4530b; }
.const { color:#b4530b; } .op { color:#3b4252; }
details { margin:4px 0; } summary { cursor:pointer; color:var(--accent); font-size:13px; }
.legend { display:flex; gap:14px; font-size:12px; color:var(--muted); margin:4px 0 8px; }
.legend span::before { content:""; display:inline-block; width:10px; height:10px; margin-right:5px; vertical-align:-1px; border-radius:2px; }
.legend .lb::before { background:var(--break); } .legend .lr::before { background:var(--recomp); } .legend .lg::before { background:var(--guard); }
.muted { color:var(--muted); } .ok { color:var(--ok); } .warn { color:var(--break); }
.hits { list-style:none; padding:0; } .hits li { padding:6px 8px; border-bottom:1px solid var(--line); background:#fff; }
.hits .where { color:var(--muted); font-size:12px; } .hits code { white-space:pre-wrap; }
.empty { color:var(--muted); font-style:italic; }
"""

JS = r"""
(function () {
  function $(sel, root) { return (root || document).querySelector(sel); }
  function $$(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function activatePane(pane) {
    var group = pane.parentNode;
    $$(':scope > .pane', group).forEach(function (p) { p.classList.toggle('on', p === pane); });
    var tabs = group.id ? $('.tabs[data-for="' + group.id + '"]') : null;
    if (tabs) $$('button', tabs).forEach(function (b) { b.classList.toggle('on', b.getAttribute('data-pane') === pane.id); });
  }
  function show(view) {
    $$('.view').forEach(function (v) { v.classList.toggle('shown', v === view); });
    $$('nav a').forEach(function (a) { a.classList.toggle('active', a.getAttribute('href') === '#' + view.id); });
    document.title = (view.getAttribute('data-title') || view.id) + ' — pellucid report';
  }
  function route() {
    var id = decodeURIComponent(location.hash.slice(1)) || 'overview';
    var el = document.getElementById(id);
    if (!el) { el = document.getElementById('overview'); }
    var view = el.classList.contains('view') ? el : el.closest('.view');
    show(view);
    $$('.line.hl').forEach(function (l) { l.classList.remove('hl'); });
    var p = el.closest('.pane');
    while (p) { activatePane(p); p = p.parentNode.closest('.pane'); }
    var d = el.closest('details'); if (d) d.open = true;
    if (el !== view) {
      if (el.classList.contains('line')) el.classList.add('hl');
      el.scrollIntoView({block: 'center'});
    } else { window.scrollTo(0, 0); }
    if (id === 'search') runSearch();
  }
  document.addEventListener('click', function (e) {
    var b = e.target.closest('.tabs button');
    if (!b) return;
    var pane = document.getElementById(b.getAttribute('data-pane'));
    if (pane) activatePane(pane);
  });
  var index = null;
  function buildIndex() {
    index = [];
    $$('.line, .searchable').forEach(function (el) {
      if (!el.id) return;
      var view = el.closest('.view');
      var code = el.classList.contains('line') ? el.querySelector('code') : null;
      var text = code ? code.textContent : el.innerText.replace(/\s+/g, ' ');
      var where = view ? (view.getAttribute('data-title') || view.id) : '';
      if (code) where += ' · line ' + el.querySelector('.n').textContent;
      index.push([el.id, text, where]);
    });
  }
  function runSearch() {
    var input = $('#q'); var q = (input.value || '').trim().toLowerCase();
    var list = $('#hits'); var count = $('#hit-count');
    list.innerHTML = '';
    if (!q) { count.textContent = 'Type in the search box: every source line, guard, graph and reason is searched.'; return; }
    if (!index) buildIndex();
    var n = 0, shown = 0;
    for (var i = 0; i < index.length; i++) {
      var text = index[i][1], at = text.toLowerCase().indexOf(q); if (at < 0) continue;
      n++; if (shown >= 300) continue; shown++;
      var from = Math.max(0, at - 80), snippet = (from ? '…' : '') + text.slice(from, at + q.length + 120).trim();
      var li = document.createElement('li');
      var a = document.createElement('a'); a.href = '#' + index[i][0];
      var where = document.createElement('div'); where.className = 'where'; where.textContent = index[i][2];
      var code = document.createElement('code'); code.textContent = snippet;
      a.appendChild(code); li.appendChild(where); li.appendChild(a); list.appendChild(li);
    }
    count.textContent = n + ' match' + (n === 1 ? '' : 'es') + ' for "' + input.value.trim() + '"' + (n > shown ? ' (first ' + shown + ' shown)' : '');
  }
  var timer = null;
  document.addEventListener('DOMContentLoaded', function () {
    var input = $('#q');
    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () { if (location.hash !== '#search') location.hash = '#search'; else runSearch(); }, 150);
    });
    input.addEventListener('keydown', function (e) { if (e.key === 'Enter') { if (location.hash !== '#search') location.hash = '#search'; else runSearch(); } });
    route();
  });
  window.addEventListener('hashchange', route);
})();
"""
