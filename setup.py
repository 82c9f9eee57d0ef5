from configparser import ConfigParser
import setuptools, shlex

# note: all settings are in settings.ini; edit there, not here
config = ConfigParser(delimiters=['='])
config.read('settings.ini', encoding='utf-8')
cfg = config['DEFAULT']

cfg_keys = 'version description keywords author author_email'.split()
expected = cfg_keys + "lib_name user branch license status min_python audience language".split()
for o in expected: assert o in cfg, "missing expected setting: {}".format(o)
setup_cfg = {o:cfg[o] for o in cfg_keys}

licenses = {
    'apache2': ('Apache Software License 2.0','OSI Approved :: Apache Software License'),
    'mit': ('MIT License', 'OSI Approved :: MIT License'),
}
statuses = [ '1 - Planning', '2 - Pre-Alpha', '3 - Alpha',
    '4 - Beta', '5 - Production/Stable', '6 - Mature', '7 - Inactive' ]
py_versions = '3.10 3.11 3.12 3.13'.split()

requirements = shlex.split(cfg.get('requirements', ''))
dev_requirements = shlex.split(cfg.get('dev_requirements', ''))
bench_requirements = shlex.split(cfg.get('bench_requirements', ''))   # torchtune, the benchmark's second peer
lic = licenses.get(cfg['license'].lower(), (cfg['license'], None))
min_python = cfg['min_python']

setuptools.setup(
    name = cfg['lib_name'],
    license = 'Apache-2.0' if cfg['license'] == 'apache2' else lic[0],
    classifiers = [
        'Development Status :: ' + statuses[int(cfg['status'])],
        'Intended Audience :: ' + cfg['audience'].title(),
        'Natural Language :: ' + cfg['language'].title(),
    ] + ['Programming Language :: Python :: '+o for o in py_versions[py_versions.index(min_python):]],
    url = cfg['git_url'],
    # seed_tasks holds data only (the demo's and the data notebook's seed files): named as a package of its own so
    # that setuptools ships it without warning that an importable folder is missing from `packages`
    packages = setuptools.find_packages(include=['felafax_lit', 'felafax_lit.*']) + ['felafax_lit.seed_tasks'],
    include_package_data = True,
    package_data = {'felafax_lit.seed_tasks': ['*.json', '*.jsonl', '*.md']},
    install_requires = requirements,
    extras_require={ 'dev': dev_requirements, 'bench': bench_requirements },
    dependency_links = cfg.get('dep_links','').split(),
    python_requires  = '>=' + cfg['min_python'],
    long_description = open('README.md', encoding='utf-8').read(),
    long_description_content_type = 'text/markdown',
    zip_safe = False,
    entry_points = {
        'console_scripts': cfg.get('console_scripts','').split(),
        'nbdev': [f'{cfg.get("lib_path")}={cfg.get("lib_path")}._modidx:d']
    },
    **setup_cfg)
