"""Build the documentation site into `_docs/` without Quarto: nbdev's notebook processors, then Sphinx + myst-nb.

Usage (from anywhere): `python tools/build_docs.py [--root DIR] [--out DIR] [--force]`

1. `nbdev.serve.proc_nbs` runs nbdev's standard processors (the ones `nbdev_docs` runs before Quarto): it adds
   `show_doc` cells after exported cells and executes the import/exported cells to render them, removes hidden and
   exported source, links backticked names, and writes the processed notebooks into `_proc/` (cached by mtime).
2. Each processed notebook is translated from Quarto conventions to what myst-nb reads (frontmatter -> `# Title`,
   `#| echo/output/include` directives -> cell tags, `#| output: asis` show_doc outputs -> markdown cells) into
   `_build/docs_src/`, named like nbdev names pages (`00_core.ipynb` -> `core.html`).
3. `sphinx-build` with myst-nb (`nb_execution_mode = "off"`: notebooks show their committed outputs) writes HTML
   into `_docs/` (settings.ini `doc_path`). Sphinx config: `tools/docs_conf.py`.

`nbdev_docs` (Quarto) stays the standard build where Quarto is installed; both read the same notebooks.
"""
import argparse, json, os, re, shutil, sys, time
from pathlib import Path

_re_dir = re.compile(r'^\s*#\s*\|\s*([\w-]+)\s*:?\s*(.*?)\s*$')
_false = {'false', 'no', '0'}

def _src(cell):
    s = cell.get('source', '')
    return ''.join(s) if isinstance(s, list) else s

def _directives(src):
    "Split leading `#| key: value` lines off a code cell's source -> (dict, rest)"
    lines, d = src.splitlines(), {}
    i = 0
    while i < len(lines):
        if not lines[i].strip() and d: i += 1; continue
        m = _re_dir.match(lines[i])
        if not m: break
        d[m.group(1).lower()] = m.group(2).strip().strip('"\'').lower()
        i += 1
    return d, '\n'.join(lines[i:])

def _frontmatter(cell):
    "YAML dict from nbdev's raw `---` frontmatter cell, else None"
    import yaml
    s = _src(cell).strip()
    if cell.get('cell_type') != 'raw' or not s.startswith('---'): return None
    body = s.strip('-\n')
    try: return yaml.safe_load(body) or {}
    except yaml.YAMLError: return None

def _md_cell(text, tags=()):
    return {'cell_type': 'markdown', 'metadata': {'tags': list(tags)} if tags else {}, 'source': text}

class Linker:
    "Rewrite nbdev's absolute links into this site to relative links, and give show_doc headings nbdev's anchors"
    def __init__(self, doc_url, depth=0):
        self.doc_url, self.up = doc_url.rstrip('/') + '/', '../' * depth
    def links(self, md):
        if not self.doc_url.strip('/'): return md
        return md.replace('](' + self.doc_url, '](' + self.up)
    def anchors(self, md):
        "`### LlamaConfig.from_hf` -> docutils id `llamaconfig-from-hf`; nbdev links use `#llamaconfig.from_hf`"
        from docutils.nodes import make_id
        def _sub(m):
            nm = re.sub(r'<[^>]+>|`|\\', '', m.group(2)).strip()
            nb_id = nm.lower()
            if not nb_id or make_id(nm) == nb_id: return m.group(0)
            return f'<span id="{nb_id}"></span>\n\n{m.group(0)}'
        return re.sub(r'^(#{2,6}) +(.+)$', _sub, md, flags=re.MULTILINE)

def _asis_md(outputs):
    "The markdown a `#| output: asis` cell shows (Quarto inserts it into the page as markdown)"
    res = []
    for o in outputs:
        if o.get('output_type') == 'stream': res.append(_src({'source': o.get('text', '')}))
        data = o.get('data', {})
        for k in ('text/markdown', 'text/plain'):
            if k in data: res.append(_src({'source': data[k]})); break
    return '\n\n'.join(r for r in res if r.strip())

_attr_link = re.compile(r'\[([^\]]+)\]\(([^)\s]+)\)\{((?:\s*[\w-]+=(?:"[^"]*"|\S+))+)\s*\}')

def _html_attr_links(md):
    'Quarto\'s `[text](url){key="value" ...}` (show_doc\'s source link) as an HTML link with those attributes'
    def _sub(m):
        attrs = ' '.join(f'{k}="{v.strip(chr(34))}"' for k, v in re.findall(r'([\w-]+)=("[^"]*"|\S+)', m.group(3)))
        return f'<a href="{m.group(2)}" {attrs}>{m.group(1)}</a>'
    return _attr_link.sub(_sub, md)

def convert_nb(nb, page_name, linker):
    "Translate one nbdev-processed (Quarto-flavoured) notebook into a notebook myst-nb renders the same way"
    cells, title, desc = [], None, None
    for cell in nb.get('cells', []):
        ct = cell.get('cell_type')
        if 'source' not in cell: continue                           # nbdev removed it (hide/export)
        fm = _frontmatter(cell)
        if fm is not None:
            title, desc = title or fm.get('title'), desc or fm.get('description')
            continue
        if ct == 'raw': continue
        if ct == 'markdown':
            cell['source'] = linker.links(_src(cell))
            cells.append(cell); continue
        d, src = _directives(_src(cell))
        if d.get('include') in _false: continue
        echo, output = d.get('echo', 'true'), d.get('output', 'true')
        outs = cell.get('outputs', [])
        if output == 'asis':
            md = _html_attr_links(linker.anchors(linker.links(_asis_md(outs))))
            # show_doc starts with a `---` rule; docutils rejects a transition right after a heading, so use raw HTML
            md = re.sub(r'^\s*---\s*\n', '<hr class="docutils showdoc">\n\n', md, count=1)
            if echo not in _false and src.strip():
                cell['source'], cell['outputs'] = src, []
                cells.append(cell)
            if md.strip(): cells.append(_md_cell(md))
            continue
        tags = list(cell.get('metadata', {}).get('tags', []))
        if echo in _false: tags.append('remove-input')
        if output in _false: tags.append('remove-output')
        if echo in _false and (output in _false or not outs): continue
        if not src.strip() and not outs: continue
        cell['source'] = src
        cell.setdefault('metadata', {})
        cell['metadata'] = {k: v for k, v in cell['metadata'].items() if k in ('tags',)}
        if tags: cell['metadata']['tags'] = tags
        cell.setdefault('outputs', []); cell.setdefault('execution_count', None)
        cells.append(cell)
    head = f'# {title or page_name}'
    if desc: head += f'\n\n> {desc}'
    nb['cells'] = [_md_cell(head)] + cells
    for i, c in enumerate(nb['cells']): c['id'] = f'c{i}'
    nb['nbformat'], nb['nbformat_minor'] = 4, max(5, nb.get('nbformat_minor', 5))
    md = nb.setdefault('metadata', {})
    md.setdefault('kernelspec', {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'})
    md.setdefault('language_info', {'name': 'python'})
    for k in ('widgets',): md.pop(k, None)
    return nb

def page_name(nb_path, fm):
    "Page path without suffix, as nbdev/Quarto name it: frontmatter `output-file`, else number prefix dropped"
    of = (fm or {}).get('output-file')
    name = Path(of).stem if of else re.sub(r'^\d+[a-zA-Z0-9]*_', '', nb_path.stem.lower())
    return (nb_path.parent / name).as_posix()

def _write_if_changed(p, text):
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.exists() and p.read_text(encoding='utf-8') == text: return
    p.write_text(text, encoding='utf-8')

def _nb_sort_key(p):
    return (p.parts[:-1], p.name != 'index.ipynb', p.name)

def stage(proc, src_dir, cfg):
    "Convert `_proc/` into the Sphinx source dir; returns the ordered page names"
    doc_url = cfg.get('doc_host', '') + cfg.get('doc_baseurl', '')
    nbs = sorted((p.relative_to(proc) for p in proc.rglob('*.ipynb')
                  if not any(q.startswith(('.', '_')) for q in p.relative_to(proc).parts)), key=_nb_sort_key)
    keep, pages, used = set(), [], set()
    for rel in nbs:
        nb = json.loads((proc / rel).read_text(encoding='utf-8'))
        fm = next((f for f in map(_frontmatter, nb.get('cells', [])) if f is not None), None)
        name = page_name(rel, fm)
        if name in used: name = rel.with_suffix('').as_posix()
        used.add(name)
        nb = convert_nb(nb, Path(name).name, Linker(doc_url, depth=len(Path(name).parts) - 1))
        if name != 'index': pages.append(name)
        keep.add(name + '.ipynb')
        _write_if_changed(src_dir / (name + '.ipynb'), json.dumps(nb, indent=1, ensure_ascii=False))
    # non-notebook files the pages may reference (images, data); Quarto/Sphinx configs and stray docs are skipped
    skip_sfx = {'.ipynb', '.md', '.qmd', '.rst', '.yml', '.yaml', '.py', '.txt'}
    for p in proc.rglob('*'):
        rel = p.relative_to(proc)
        if p.is_file() and p.suffix not in skip_sfx and not any(q.startswith(('.', '_')) for q in rel.parts):
            keep.add(rel.as_posix())
            if not (src_dir / rel).exists() or (src_dir / rel).read_bytes() != p.read_bytes():
                (src_dir / rel).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(p, src_dir / rel)
    toc = '```{toctree}\n:hidden:\n:maxdepth: 2\n:caption: Contents\n\n' + '\n'.join(pages) + '\n```'
    idx = src_dir / 'index.ipynb'
    if 'index.ipynb' in keep:
        nb = json.loads(idx.read_text(encoding='utf-8'))
        nb['cells'].append(dict(_md_cell(toc), id='toc'))
    else:  # no nbs/index.ipynb yet: a minimal landing page from settings.ini
        nb = {'nbformat': 4, 'nbformat_minor': 5, 'metadata': {'kernelspec': {'display_name': 'Python 3',
              'language': 'python', 'name': 'python3'}, 'language_info': {'name': 'python'}},
              'cells': [dict(_md_cell(f"# {cfg.get('title', cfg.get('lib_name', 'Docs'))}\n\n> {cfg.get('description', '')}"),
                             id='title'), dict(_md_cell(toc), id='toc')]}
        keep.add('index.ipynb')
    _write_if_changed(idx, json.dumps(nb, indent=1, ensure_ascii=False))
    for p in list(src_dir.rglob('*')):  # drop pages of notebooks that no longer exist
        rel = p.relative_to(src_dir).as_posix()
        if p.is_file() and rel not in keep and rel != 'conf.py': p.unlink()
    return pages

_FALLBACK = """
import sys, traceback
from pathlib import Path
from nbdev.processors import FilterDefaults, exec_show_docs
from nbdev.serve_drv import main
class NoExec(FilterDefaults):
    def base_procs(self): return [p for p in super().base_procs() if p is not exec_show_docs]
src, dst, fb = map(Path, sys.argv[1:4])
try: main((src, dst, FilterDefaults))
except Exception:
    traceback.print_exc()
    fb.parent.mkdir(parents=True, exist_ok=True)
    main((src, fb, NoExec))
    sys.exit(3)
"""

def _why(err):
    "The notebook/cell and the exception lines of a processing traceback"
    lines = err.strip().splitlines()
    keep = [l for l in lines if l.startswith('Exception: Error') or re.match(r'^[\w.]+(Error|Exception|Exit)\b', l)]
    return '\n'.join(keep[-3:]) or '\n'.join(lines[-5:])

def process(root, cfg, force=False, n_workers=None):
    "nbdev's `proc_nbs` (what `nbdev_docs` runs before Quarto); on failure, name the notebooks and render them without API docs"
    from nbdev.serve import proc_nbs
    from nbdev.doclinks import nbglob
    import subprocess
    fb = root / '_build' / 'proc_fallback'
    shutil.rmtree(fb, ignore_errors=True)
    kw = {} if n_workers is None else {'n_workers': n_workers}
    try: return proc_nbs(force=force, **kw), fb, []
    except Exception as e: print(f'nbdev processing failed: {e}', file=sys.stderr)
    nbs, proc, failed = Path(cfg.nbs_path), cfg.config_path / '_proc', []
    for src in nbglob(nbs, func=Path):
        dst = proc / src.relative_to(nbs)
        if dst.exists() and dst.stat().st_mtime >= src.stat().st_mtime: continue
        r = subprocess.run([sys.executable, '-c', _FALLBACK, str(src), str(dst), str(fb / src.relative_to(nbs))],
                           capture_output=True, text=True)
        if r.returncode == 0: continue
        failed.append(src.relative_to(root).as_posix())
        if dst.exists(): dst.unlink()   # keep it out of nbdev's cache so the next build retries it
        print(f'ERROR: {failed[-1]}: nbdev could not run the cells show_doc needs (nbdev_docs fails the same way; '
              f'usually a cell mixing imports with other code):\n' + _why(r.stderr), file=sys.stderr)
        if r.returncode != 3: raise SystemExit(f'{failed[-1]}: could not be processed at all')
    return proc, fb, failed

def unlink_missing(out):
    "nbdev links every backticked name it knows, private ones and methods too; keep a link only where its page has the id"
    pages = {p.name: p.read_text(encoding='utf-8') for p in Path(out).glob('*.html')}
    ids = {n: set(re.findall(r'\bid="([^"]+)"', t)) for n, t in pages.items()}
    link = re.compile(r'<a class="reference external" href="([^":#?]+\.html)#([^"]+)">(.*?)</a>', re.S)
    dropped = 0
    for name, text in pages.items():
        def _sub(m):
            nonlocal dropped
            if m.group(2) in ids.get(m.group(1), ()): return m.group(0)
            dropped += 1; return m.group(3)
        new = link.sub(_sub, text)
        if new != text: (Path(out) / name).write_text(new, encoding='utf-8')
    return dropped

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--root', default=str(Path(__file__).resolve().parent.parent), help='project root (settings.ini)')
    ap.add_argument('--out', default=None, help='output dir (default: settings.ini doc_path, i.e. _docs)')
    ap.add_argument('--force', action='store_true', help='ignore the _proc cache and Sphinx environment')
    ap.add_argument('--n-workers', type=int, default=None, help='notebook processing workers (default: CPUs)')
    a = ap.parse_args(argv)
    root = Path(a.root).resolve()
    os.chdir(root)
    # the library must import for show_doc even when not pip-installed (children inherit PYTHONPATH)
    sys.path.insert(0, str(root))
    os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, [str(root), os.environ.get('PYTHONPATH')]))
    from nbdev.config import get_config
    cfg = get_config()
    out = Path(a.out).resolve() if a.out else cfg.config_path / cfg.get('doc_path', '_docs')
    build = root / '_build'
    src_dir, doctrees = build / 'docs_src', build / 'doctrees'
    if a.force: shutil.rmtree(src_dir, ignore_errors=True); shutil.rmtree(doctrees, ignore_errors=True)
    t0 = time.time()
    proc, fb, failed = process(root, cfg, a.force, a.n_workers)
    t1 = time.time()
    print(f'nbdev processors -> {proc.relative_to(root)} ({t1 - t0:.1f}s)')
    src_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / 'tools' / 'docs_conf.py', src_dir / 'conf.py')
    if failed:   # overlay the fallback renderings (no API docs) of notebooks that failed
        tmp = build / 'proc_merged'
        shutil.rmtree(tmp, ignore_errors=True); shutil.copytree(proc, tmp); shutil.copytree(fb, tmp, dirs_exist_ok=True)
        proc = tmp
    pages = stage(proc, src_dir, dict(cfg.d) if hasattr(cfg, 'd') else dict(cfg))
    print(f'pages: index{"".join(", " + p for p in pages)}')
    from sphinx.cmd.build import build_main
    os.environ['FELAFAX_DOCS_ROOT'] = str(root)
    rc = build_main(['-b', 'html', '-q', '-d', str(doctrees), *(['-E'] if a.force else []), str(src_dir), str(out)])
    if (out / '_sources').is_dir() and not any((out / '_sources').iterdir()): (out / '_sources').rmdir()
    if rc == 0: print(f'links to names without a doc entry, shown as plain code: {unlink_missing(out)}')
    print(f'sphinx -> {out} ({time.time() - t1:.1f}s); total {time.time() - t0:.1f}s')
    if failed: print(f'ERROR: built without API docs for: {", ".join(failed)}', file=sys.stderr)
    return rc or int(bool(failed))

if __name__ == '__main__': sys.exit(main())
