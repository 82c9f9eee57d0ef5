"""Write README.md from nbs/index.ipynb (markdown cells as they are, code cells as fenced Python, text outputs fenced).

nbdev's own `nbdev_readme` needs Quarto; this does the same job without it. `--check` exits 1 if README.md is stale.
"""
import json, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def render(nb_path=ROOT/'nbs'/'index.ipynb') -> str:
    nb = json.loads(Path(nb_path).read_text())
    out = []
    for c in nb['cells']:
        src = ''.join(c['source']).rstrip()
        if not src or src.startswith('#| hide') or '#| hide\n' in src[:20]: continue
        if c['cell_type'] == 'markdown': out.append(src)
        else:
            lines = [l for l in src.split('\n') if not l.startswith('#|')]
            out.append('```python\n' + '\n'.join(lines) + '\n```')
            for o in c.get('outputs', []):
                txt = ''.join(o.get('text', '') or o.get('data', {}).get('text/plain', ''))
                if txt.strip(): out.append('```\n' + txt.rstrip() + '\n```')
    return '<!-- generated from nbs/index.ipynb by tools/make_readme.py; edit the notebook, not this file -->\n\n' + '\n\n'.join(out) + '\n'

if __name__ == '__main__':
    text = render()
    if '--check' in sys.argv:
        if (ROOT/'README.md').read_text() != text: sys.exit('README.md is out of date: run python tools/make_readme.py')
    else: (ROOT/'README.md').write_text(text)
