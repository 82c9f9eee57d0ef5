# Sphinx configuration for the docs site built by tools/build_docs.py (copied to _build/docs_src/conf.py).
# Values come from settings.ini, like nbdev's nbs/nbdev.yml does for Quarto.
import os
from configparser import ConfigParser
from pathlib import Path

_root = Path(os.environ.get('FELAFAX_DOCS_ROOT', Path(__file__).resolve().parents[2]))
_ini = ConfigParser(delimiters=['=']); _ini.read(_root / 'settings.ini', encoding='utf-8')
_cfg = _ini['DEFAULT']

project = _cfg.get('title', _cfg.get('lib_name'))
author = _cfg.get('author', '')
copyright = _cfg.get('copyright', '')
release = version = _cfg.get('version', '')

extensions = ['myst_nb', 'sphinx.ext.githubpages']   # githubpages: writes .nojekyll
root_doc = 'index'
exclude_patterns = ['_build', '**.ipynb_checkpoints', 'conf.py']

# Notebooks are rendered with their committed outputs; nothing runs at build time.
nb_execution_mode = 'off'
nb_render_markdown_format = 'myst'     # text/markdown outputs (tables etc.)
nb_merge_streams = True
myst_enable_extensions = ['dollarmath', 'amsmath', 'colon_fence', 'html_image']
myst_heading_anchors = 0
# nbdev's doc links point at pages and show_doc anchors (`core.html#llamaconfig`), not at Sphinx targets: keep them as
# written; tests/test_docs.py checks that each one lands on a page and an id that exist
myst_all_links_external = True
# show_doc headings are H3 under the page title; nbdev pages jump levels by design
suppress_warnings = ['myst.header', 'mystnb.unknown_mime_type', 'misc.highlighting_failure', 'toc.not_included']
pygments_style = 'friendly'

html_theme = 'alabaster'
html_title = project
html_theme_options = {
    'description': _cfg.get('description', ''),
    'extra_nav_links': {'GitHub': _cfg.get('git_url', '')} if _cfg.get('git_url') else {},
    'page_width': '1180px', 'sidebar_width': '250px', 'fixed_sidebar': True,
    'show_relbars': True, 'code_font_size': '0.85em', 'font_size': '16px',
}
html_sidebars = {'**': ['about.html', 'searchfield.html', 'navigation.html', 'relations.html']}
html_show_sourcelink = False
html_copy_source = False
html_baseurl = _cfg.get('doc_host', '') + _cfg.get('doc_baseurl', '') + '/'
html_last_updated_fmt = None
