"""The docs site builds (tools/build_docs.py: nbdev processors + Sphinx/myst-nb) and renders in headless Chromium.

Checks, on the pages as Chromium renders them (`--dump-dom`): the index has its title and links to every numbered
notebook's page; the first API notebook's page has its `# Title` as <h1>, a show_doc heading for an exported name,
that name's signature in a highlighted code block, and one of the notebook's own code cells. Skips only when
Chromium is missing outside CI; with `CI=true` a missing Chromium fails.
"""
import ast, html, json, os, re, shutil, subprocess, sys, tempfile
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / 'nbs'
IN_CI = os.environ.get('CI', '').lower() in ('true', '1', 'yes')

def _chromium():
    exe = next((shutil.which(o) for o in ('chromium', 'chromium-browser', 'google-chrome') if shutil.which(o)), None)
    if exe is None:
        msg = 'chromium not installed (apt-get install -y chromium)'
        if IN_CI: pytest.fail(msg + ': required in CI')
        pytest.skip(msg)
    return exe

def _browse(exe, page, *args):
    "Load `page` in headless Chromium with no network and no profile; returns stdout (the DOM for --dump-dom)"
    with tempfile.TemporaryDirectory() as prof:
        cmd = [exe, '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
               '--disable-background-networking', '--disable-component-update', '--disable-sync',
               '--host-resolver-rules=MAP * ~NOTFOUND', f'--user-data-dir={prof}', *args, page.as_uri()]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout

def _text(s): return html.unescape(re.sub(r'<[^>]+>', '', s)).replace('¶', '').replace('#', '').strip()
def _main(dom):
    "The page body (alabaster puts the project name in an <h1> in the sidebar too)"
    m = re.search(r'<div class="body" role="main">(.*?)(?:<div class="sphinxsidebar"|<div class="footer"|</body>)', dom, re.S)
    assert m, 'no main body in the page'
    return m.group(1)
def _headings(dom, level): return [_text(h) for h in re.findall(fr'<h{level}[^>]*>(.*?)</h{level}>', dom, re.S)]
def _highlighted(dom): return [_text(p) for p in re.findall(r'<div class="highlight"><pre>(.*?)</pre>', dom, re.S)]
def _src(c): return ''.join(c['source']) if isinstance(c['source'], list) else c['source']
def _page(nb): return re.sub(r'^\d+[a-zA-Z0-9]*_', '', nb.stem.lower()) + '.html'   # nbdev's page naming

def _api_nb():
    "First numbered notebook that exports a public name: (path, title, name, a visible code cell's first line)"
    for nb in sorted(NBS.glob('[0-9]*.ipynb')):
        cells = json.loads(nb.read_text(encoding='utf-8'))['cells']
        title = next((m.group(1).strip() for c in cells if c['cell_type'] == 'markdown'
                      for m in [re.match(r'\s*#\s+(.+)', _src(c))] if m), None)
        names, code = [], None
        for c in cells:
            s = _src(c)
            if c['cell_type'] != 'code': continue
            dirs = re.findall(r'^\s*#\|\s*(\w+)', s, re.M)
            if 'export' in dirs or 'exports' in dirs:
                try: tree = ast.parse(s)
                except SyntaxError: continue
                names += [t.name for t in tree.body if isinstance(t, (ast.FunctionDef, ast.ClassDef))
                          and not t.name.startswith('_')]
            elif not dirs and code is None:
                code = next((l for l in s.splitlines() if l.strip() and not l.lstrip().startswith('#')), None)
        if title and names: return nb, title, names[0], code
    return None

BUILD = {}
# One worker runs every test here (`--dist loadgroup` in pytest.ini; pytest<9.2, see settings.ini), so the other
# runs notebooks while this one builds the site.
pytestmark = pytest.mark.xdist_group('docs')

@pytest.fixture(scope='session')
def site(tmp_path_factory):
    "The site, built once per test run (workers that meet here anyway share one build: the first builds it)."
    import fcntl
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get('PYTEST_XDIST_WORKER') else base   # a worker's parent: this run's, shared
    out, log = root / 'site', root / 'site.log'
    with open(root / 'site.lock', 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not log.exists():
            r = subprocess.run([sys.executable, str(ROOT / 'tools' / 'build_docs.py'), '--out', str(out), '--force'],
                               cwd=ROOT, capture_output=True, text=True, timeout=1200)
            assert r.returncode == 0, f'docs build failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}'
            log.write_text(json.dumps([r.stdout, r.stderr]))
    stdout, stderr = json.loads(log.read_text())
    assert 'ERROR' not in stderr, stderr[-3000:]
    BUILD['log'] = stdout + stderr
    return out

def test_build_is_clean(site):
    "No warning from the build (missing cross-references included), and no Quarto attribute text on any page"
    warnings = [l for l in BUILD['log'].splitlines() if 'WARNING' in l]
    assert not warnings, f'{len(warnings)} warnings, e.g.\n' + '\n'.join(warnings[:10])
    for page in sorted(site.glob('*.html')):
        text = _text(page.read_text(encoding='utf-8'))
        assert '{target=' not in text, (page.name, text[max(0, text.find('{target=') - 80):][:200])

_addr = re.compile(r'object at 0x[0-9a-fA-F]+')   # a default repr: `<flax.linen.module._Sentinel object at 0x7f...>`

def test_pages_do_not_leak(site):
    """The built pages hold no path of the machine that built them (cells the build runs itself, exported and import
    cells, print nothing of it) and no memory address (a signature's default shown by its object's default repr)"""
    here = [h for h in (str(ROOT), str(Path.home()) + '/', sys.prefix) if len(h) > 4]
    for page in sorted(site.glob('*.html')):
        raw = page.read_text(encoding='utf-8')
        for text in (raw, _text(raw)):   # as written, and as read: pygments splits code into a <span> per token
            for h in here: assert h not in text, (page.name, h, text[max(0, text.find(h) - 200):][:400])
            m = _addr.search(text)
            assert m is None, (page.name, text[max(0, m.start() - 200):m.end() + 100])

def test_signatures_show_their_fields(site):
    "Signatures as `core._doc_renderer` shows them: a dataclass's fields with their comments, a flax module's own fields"
    core, model = (html.unescape(re.sub(r'<[^>]+>', '', (site / f'{p}.html').read_text(encoding='utf-8')))
                   for p in ('core', 'model'))   # as read, comments' # kept
    assert 'rank:int=8, # r: inner dimension of A' in core, core[core.find('LoRAConfig('):][:300]
    assert 'features:int, # output width' in model and 'parent:Union' not in model, model[model.find('Dense('):][:300]

def test_links_resolve(site):
    "Every link between pages (`core.html#llamaconfig`) lands on a page that exists and an id on it"
    ids, bad, n = {}, [], 0
    for page in sorted(site.glob('*.html')):
        for href in re.findall(r'href="([^":#?]+\.html)(?:#([^"]*))?"', page.read_text(encoding='utf-8')):
            target, anchor = site / href[0], href[1]; n += 1
            if not target.exists(): bad.append(f'{page.name}: {href[0]} (no such page)'); continue
            if target not in ids: ids[target] = set(re.findall(r'\bid="([^"]+)"', target.read_text(encoding='utf-8')))
            if anchor and anchor not in ids[target]: bad.append(f'{page.name}: {href[0]}#{anchor} (no such id)')
    assert n > 50 and not bad, f'{len(bad)} of {n} links do not resolve, e.g. ' + '; '.join(bad[:10])

def test_index_renders(site):
    exe = _chromium()
    full = _browse(exe, site / 'index.html', '--dump-dom')
    dom = _main(full)
    h1 = _headings(dom, 1)
    assert len(h1) == 1 and h1[0], h1
    idx = NBS / 'index.ipynb'
    if idx.exists():
        titles = [m.group(1).strip() for c in json.loads(idx.read_text(encoding='utf-8'))['cells']
                  if c['cell_type'] == 'markdown' for m in [re.match(r'\s*#\s+(.+)', _src(c))] if m]
        assert titles and h1[0] == _text(titles[0]), (h1, titles[:1])
    for nb in sorted(NBS.glob('[0-9]*.ipynb')):   # the sidebar/toctree lists every numbered notebook
        assert f'href="{_page(nb)}"' in full, f'index does not link {_page(nb)} ({nb.name})'
    png = site / 'index.png'
    _browse(exe, site / 'index.html', '--window-size=1280,1000', '--hide-scrollbars', f'--screenshot={png}')
    assert png.stat().st_size > 10_000   # a blank page is a few KB

def test_api_page_renders(site):
    exe = _chromium()
    found = _api_nb()
    if found is None: pytest.skip('no numbered notebook exports a public name yet')
    nb, title, name, code = found
    page = site / _page(nb)
    assert page.exists(), f'{nb.name} -> {page.name} missing'
    dom = _main(_browse(exe, page, '--dump-dom'))
    assert _headings(dom, 1) == [_text(title)], (_headings(dom, 1), title)
    # show_doc output: an <h3> per exported name, its signature in a syntax-highlighted block
    assert name in _headings(dom, 3), (name, _headings(dom, 3)[:20])
    sigs = _highlighted(dom)
    assert any(re.search(fr'\b(def|class)\s+{re.escape(name)}\b', p) for p in sigs), (name, sigs[:5])
    assert '<span class="k">def</span>' in dom or '<span class="k">class</span>' in dom   # pygments ran
    if code:   # a plain code cell of the notebook, shown as a highlighted input cell
        assert any(code.strip() in p for p in sigs), (code, sigs[:10])
    png = site / 'api.png'
    _browse(exe, page, '--window-size=1280,1600', '--hide-scrollbars', f'--screenshot={png}')
    assert png.stat().st_size > 10_000

def test_outputs_do_not_leak():
    "Committed cell outputs are what a reader should see: no error output, no traceback, no path of the machine that ran them"
    here = [str(ROOT), str(Path.home()) + '/']
    for nb in sorted(NBS.glob('*.ipynb')):
        for i, c in enumerate(json.loads(nb.read_text(encoding='utf-8'))['cells']):
            for o in c.get('outputs', []):
                t = json.dumps(o)
                assert o.get('output_type') != 'error' and 'Traceback (most recent call last)' not in t, (nb.name, i)
                assert not any(h in t for h in here if len(h) > 4), (nb.name, i, t[:300])
